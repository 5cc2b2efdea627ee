import DeepLinks

/// The shipped config/routes.json, as AASA code sees it.
enum AASATestShapes {
    static let app = "A1B2C3D4E5.com.example.shop"

    static let shop: [AASARouteShape] = [
        route("product", "/product/:id", [.literal("product"), .parameter(name: "id", kind: .int)]),
        route("order", "/order/:id", [.literal("order"), .parameter(name: "id", kind: .uuid)]),
        route("profile", "/profile", [.literal("profile")]),
        route("help", "/help/*", [.literal("help"), .wildcard]),
    ]

    static func route(_ name: String, _ pattern: String, _ segments: [AASARouteShape.Segment],
                      required: [(name: String, kind: AASARouteShape.ValueKind)] = []) -> AASARouteShape {
        AASARouteShape(name: name, pattern: pattern, segments: segments, requiredQuery: required)
    }
}
