import Testing
import DeepLinks

/// The shipped example table (config/routes.json), inline so tests do not depend on the
/// working directory.
let shopTableJSON = """
{
  "app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
  "hosts": ["example.com", "www.example.com"],
  "passthroughQuery": ["utm_source", "utm_medium", "utm_campaign"],
  "routes": [
    {"name": "product", "path": "/product/:id", "params": {"id": "int"}, "query": {"ref": "slug", "variant": "int"}},
    {"name": "order",   "path": "/order/:id",   "params": {"id": "uuid"}},
    {"name": "profile", "path": "/profile",     "query": {"tab": ["orders", "settings", "wishlist"]}},
    {"name": "help",    "path": "/help/*"}
  ]
}
"""

let shopTable: RouteTable = {
    do { return try RouteTable(json: shopTableJSON, source: "routes.json") } catch {
        Issue.record("shop table failed to load: \(error)")
        fatalError("test fixture broken")
    }
}()

/// A table from JSON, recording a test issue if it fails to load.
func table(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> RouteTable? {
    do { return try RouteTable(json: json, source: "t.json") } catch {
        Issue.record("table failed to load: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The load error's description for a table, or nil if it loaded.
func loadError(_ json: String) -> String? {
    do { _ = try RouteTable(json: json, source: "t.json"); return nil } catch { return error.description }
}

/// A minimal table with these routes (JSON array elements) on host example.com.
func tableJSON(routes: String, passthrough: String = "[]") -> String {
    """
    {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.app", "scheme": "app"},
     "hosts": ["example.com"], "passthroughQuery": \(passthrough), "routes": [\(routes)]}
    """
}

extension LinkCheckResult {
    var code: LinkErrorCode? {
        if case .rejected(let r) = self { return r.code }
        return nil
    }
    var message: String? {
        if case .rejected(let r) = self { return r.message }
        return nil
    }
    var link: CanonicalLink? {
        if case .accepted(let l) = self { return l }
        return nil
    }
}

func expectCanonical(_ link: String, _ canonical: String, in table: RouteTable = shopTable,
                     sourceLocation: SourceLocation = #_sourceLocation) {
    let result = table.check(link)
    #expect(result.link?.canonical == canonical, "\(link.debugDescription) → \(result)", sourceLocation: sourceLocation)
}
