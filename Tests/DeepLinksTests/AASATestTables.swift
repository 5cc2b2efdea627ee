import DeepLinks

/// Route tables for the AASA tests, built through the real loader.
enum AASATestTables {
    static let app = "A1B2C3D4E5.com.example.shop"

    /// The shipped config/routes.json.
    static let shopRoutes = """
    {"name": "product", "path": "/product/:id", "params": {"id": "int"}, "query": {"ref": "slug", "variant": "int"}},
    {"name": "order",   "path": "/order/:id",   "params": {"id": "uuid"}},
    {"name": "profile", "path": "/profile",     "query": {"tab": ["orders", "settings", "wishlist"]}},
    {"name": "help",    "path": "/help/*"}
    """

    static func table(_ routes: String) throws -> RouteTable {
        try RouteTable(json: """
        {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
         "hosts": ["example.com"], "routes": [\(routes)]}
        """, source: "test")
    }

    static func shop() throws -> RouteTable { try table(shopRoutes) }
}
