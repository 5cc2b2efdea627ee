import Testing
import DeepLinks

/// Every way a route table is refused, each with the message the CLI prints.
@Suite struct RouteTableLoadingTests {
    @Test func shippedExampleLoads() throws {
        let t = try RouteTable(json: shopTableJSON, source: "routes.json")
        #expect(t.app == AppIdentity(teamId: "A1B2C3D4E5", bundleId: "com.example.shop", scheme: "shop"))
        #expect(t.app.appID == "A1B2C3D4E5.com.example.shop")
        #expect(t.hosts == ["example.com", "www.example.com"])
        #expect(t.canonicalHost == "example.com")
        #expect(t.passthroughQuery == ["utm_source", "utm_medium", "utm_campaign"])
        #expect(t.routes.map(\.name) == ["product", "order", "profile", "help"])
        #expect(t.routes[0].segments == [.literal("product"), .parameter(name: "id", type: .int)])
        #expect(t.routes[0].query == [QueryParameter(key: "ref", type: .slug, required: false),
                                      QueryParameter(key: "variant", type: .int, required: false)])
        #expect(t.routes[2].query == [QueryParameter(key: "tab", type: .oneOf(["orders", "settings", "wishlist"]), required: false)])
        #expect(t.routes[3].segments == [.literal("help"), .wildcard])
    }

    @Test func requiredQuerySyntax() throws {
        let t = try RouteTable(json: tableJSON(routes: """
            {"name": "search", "path": "/search", "query": {"q": {"type": "string", "required": true}, "page": {"type": "int"}}}
            """), source: "t.json")
        #expect(t.routes[0].query == [QueryParameter(key: "q", type: .string, required: true),
                                      QueryParameter(key: "page", type: .int, required: false)])
    }

    @Test func everyProblemIsReportedAtOnce() {
        let json = """
        {"app": {"teamId": "short", "bundleId": "com.example.shop", "scheme": "https"},
         "hosts": ["example.com"], "colour": 1,
         "routes": [{"name": "a", "path": "/a", "paht": "/b"},
                    {"name": "b", "path": "/b/:id"},
                    {"name": "c", "path": "/c", "query": {"q": "float"}},
                    {"name": "a", "path": "/d"}]}
        """
        do {
            _ = try RouteTable(json: json, source: "t.json")
            Issue.record("accepted a broken table")
        } catch {
            let found = error.diagnostics.map { "\($0.location.place) [\($0.code)]" }
            #expect(found == [
                "t.json#/colour [unknownKey]",
                "t.json#/app/teamId [invalidValue]",
                "t.json#/app/scheme [invalidValue]",
                "t.json#/routes/0/paht [unknownKey]",
                "t.json#/routes/1/path [missing]",
                "t.json#/routes/2/query/q [invalidValue]",
            ], "\(error.diagnostics)")
            #expect(error.description == "t.json: at colour: unknown key \"colour\"; expected one of: app, hosts, routes, passthroughQuery")
        }
    }

    @Test func invalidJSON() {
        #expect(loadError("{\"app\": ") == "t.json: at app: invalid JSON: line 1, column 9: unexpected end of input: expected a value")
        #expect(loadError(#"{"app": {}, "app": {}}"#)?.hasPrefix("t.json: at app: invalid JSON: line 1, column 13: duplicate key") == true,
                "\(loadError(#"{"app": {}, "app": {}}"#) ?? "")")
        #expect(loadError("[]") == "t.json: at $: expected an object, found an array")
    }

    @Test func unknownKeysAtEveryLevel() {
        #expect(loadError(#"{"app": {}, "hosts": [], "routes": [], "extra": 1}"#)
                == #"t.json: at extra: unknown key "extra"; expected one of: app, hosts, routes, passthroughQuery"#)
        let appExtra = #"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "s", "x": 1}, "hosts": ["a.com"], "routes": []}"#
        #expect(loadError(appExtra) == #"t.json: at app.x: unknown key "x"; expected one of: teamId, bundleId, scheme"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "paths": "/b"}"#))
                == #"t.json: at routes[0].paths: unknown key "paths"; expected one of: name, path, params, query"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": {"type": "int", "optional": true}}}"#))
                == #"t.json: at routes[0].query.q.optional: unknown key "optional"; expected one of: type, required"#)
    }

    @Test func missingKeys() {
        #expect(loadError(#"{"hosts": [], "routes": []}"#) == #"t.json: at $: missing key "app""#)
        #expect(loadError(tableJSON(routes: #"{"name": "a"}"#)) == #"t.json: at routes[0]: missing key "path""#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": {"required": true}}}"#))
                == #"t.json: at routes[0].query.q: missing key "type""#)
        #expect(loadError(tableJSON(routes: "")) == "t.json: at routes: there must be at least one route")
    }

    @Test func wrongValueKinds() {
        #expect(loadError(tableJSON(routes: #"{"name": 1, "path": "/a"}"#)) == "t.json: at routes[0].name: expected a string, found a number")
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "params": []}"#))
                == "t.json: at routes[0].params: expected an object of parameter types, found an array")
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": {"type": "int", "required": "yes"}}}"#))
                == "t.json: at routes[0].query.q.required: expected true or false, found a string")
    }

    @Test func unknownTypes() {
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a/:id", "params": {"id": "integer"}}"#))
                == #"t.json: at routes[0].params.id: unknown type "integer" (expected "int", "uuid", "slug", "string" or a list of allowed values)"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": 5}}"#))
                == "t.json: at routes[0].query.q: expected a type name or a list of allowed values, found a number")
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": []}}"#))
                == "t.json: at routes[0].query.q: the list of allowed values is empty")
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": ["x", "x"]}}"#))
                == #"t.json: at routes[0].query.q[1]: duplicate allowed value "x""#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"q": ["x y"]}}"#))
                == #"t.json: at routes[0].query.q[0]: allowed value "x y" must be 1–256 characters with no whitespace, control, format characters, '/' or '\'"#)
    }

    @Test func duplicateRouteNames() {
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a"}, {"name": "a", "path": "/b"}"#))
                == #"t.json: at routes[1].name: duplicate route name "a" (also routes[0])"#)
    }

    @Test func badRouteNames() {
        #expect(loadError(tableJSON(routes: #"{"name": "", "path": "/a"}"#))
                == #"t.json: at routes[0].name: route name "" must start with a letter and use A-Z a-z 0-9 - . _ ~"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a b", "path": "/a"}"#))?.contains("route name \"a b\"") == true)
    }

    @Test(arguments: [
        ("a", #"pattern "a" must start with '/'"#),
        ("", #"pattern "" must start with '/'"#),
        ("/a//b", #"pattern "/a//b" has an empty segment 2 ('//')"#),
        ("/a/", #"pattern "/a/" must not end with '/'"#),
        ("/*/a", #"pattern "/*/a" has '*' in segment 1; '*' may only be the last segment"#),
        ("/a/:", #"pattern "/a/:" has an invalid parameter name "" in segment 2 (expected [A-Za-z_][A-Za-z0-9_]*)"#),
        ("/a/:1x", #"pattern "/a/:1x" has an invalid parameter name "1x" in segment 2 (expected [A-Za-z_][A-Za-z0-9_]*)"#),
        ("/a/:id-x", #"pattern "/a/:id-x" has an invalid parameter name "id-x" in segment 2 (expected [A-Za-z_][A-Za-z0-9_]*)"#),
        ("/a/:x/:x", #"pattern "/a/:x/:x" uses parameter "x" twice"#),
        ("/a/:y", #"pattern "/a/:y" uses :y but "params" gives it no type"#),
        ("/a b", #"pattern "/a b" has literal segment "a b" in segment 1; literals use only A-Z a-z 0-9 - . _ ~ and are not '.' or '..'"#),
        ("/a/..", #"pattern "/a/.." has literal segment ".." in segment 2; literals use only A-Z a-z 0-9 - . _ ~ and are not '.' or '..'"#),
        ("/a%20b", #"pattern "/a%20b" has literal segment "a%20b" in segment 1; literals use only A-Z a-z 0-9 - . _ ~ and are not '.' or '..'"#),
        ("/x*", #"pattern "/x*" has literal segment "x*" in segment 1; literals use only A-Z a-z 0-9 - . _ ~ and are not '.' or '..'"#),
        ("/" + Array(repeating: "s", count: 33).joined(separator: "/"), "has 33 segments; the limit is 32"),
    ])
    func badPatternSyntax(pattern: String, expected: String) {
        let params = pattern.contains(":x") ? #"{"x": "int"}"# : "{}"
        let message = loadError(tableJSON(routes: #"{"name": "r", "path": \#(JSONQuote(pattern)), "params": \#(params)}"#))
        #expect(message?.hasPrefix("t.json: at routes[0].path: ") == true, "\(message ?? "loaded")")
        #expect(message?.contains(expected) == true, "\(message ?? "loaded")")
    }

    @Test func declaredButUnusedParameter() {
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a/:id", "params": {"id": "int", "other": "slug"}}"#))
                == #"t.json: at routes[0].params.other: parameter "other" is not used in the pattern "/a/:id""#)
    }

    @Test func badHosts() {
        func hostsError(_ hosts: String) -> String? {
            loadError(#"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "s"}, "hosts": \#(hosts), "routes": [{"name": "a", "path": "/a"}]}"#)
        }
        #expect(hostsError("[]") == "t.json: at hosts: there must be at least one host")
        #expect(hostsError(#"["Example.com"]"#) == #"t.json: at hosts[0]: "Example.com": host must be lowercase"#)
        #expect(hostsError(#"["example.com."]"#) == #"t.json: at hosts[0]: "example.com.": host must not end with a dot"#)
        #expect(hostsError(#"["exаmple.com"]"#) == #"t.json: at hosts[0]: "exаmple.com": host must be an ASCII DNS name (a-z, 0-9, -, .)"#)
        #expect(hostsError(#"["127.0.0.1"]"#) == #"t.json: at hosts[0]: "127.0.0.1": host looks like an IP address (its last label is a number); list DNS names only"#)
        #expect(hostsError(#"["foo.0x1f"]"#)?.contains("host looks like an IP address") == true)
        #expect(hostsError(#"["foo.0x"]"#)?.contains("host looks like an IP address") == true)
        #expect(hostsError(#"["foo.0xg"]"#) == nil)
        #expect(hostsError(#"["a..com"]"#) == #"t.json: at hosts[0]: "a..com": host has an empty label"#)
        #expect(hostsError(#"["-a.com"]"#) == #"t.json: at hosts[0]: "-a.com": host label -a starts or ends with '-'"#)
        #expect(hostsError(#"["a.com:443"]"#) == #"t.json: at hosts[0]: "a.com:443": host must be an ASCII DNS name (a-z, 0-9, -, .)"#)
        #expect(hostsError(#"["a.com", "a.com"]"#) == #"t.json: at hosts[1]: duplicate host "a.com""#)
        #expect(hostsError(#"["xn--80ak6aa92e.com"]"#) == nil)  // punycode is fine when listed
    }

    /// Lists are read by the one document reader: every bad item is reported, not only the first.
    @Test func everyBadItemOfAListIsReported() {
        do {
            _ = try RouteTable(json: #"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.x.y"}, "hosts": ["Example.com", 7, "a.com", "a.com", "a..com"], "passthroughQuery": ["x", "x", "pass word"], "routes": [{"name": "a", "path": "/a", "query": {"t": ["v", 1, "v"]}}]}"#, source: "t.json")
            Issue.record("accepted a broken table")
        } catch {
            #expect(error.diagnostics.map { "\($0.location.place) [\($0.code)]" } == [
                "t.json#/hosts/1 [wrongType]",
                "t.json#/hosts/3 [invalidValue]",
                "t.json#/passthroughQuery/1 [invalidValue]",
                "t.json#/routes/0/query/t/1 [wrongType]",
                "t.json#/routes/0/query/t/2 [invalidValue]",
            ], "\(error.diagnostics)")
        }
        do {
            _ = try RouteTable(json: #"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.x.y"}, "hosts": ["Example.com", "a..com"], "passthroughQuery": ["ok", "pass word"], "routes": [{"name": "a", "path": "/a"}]}"#, source: "t.json")
            Issue.record("accepted a broken table")
        } catch {
            #expect(error.diagnostics.map { "\($0.location.place) [\($0.code)]" } == [
                "t.json#/hosts/0 [invalidValue]",
                "t.json#/hosts/1 [invalidValue]",
                "t.json#/passthroughQuery/1 [invalidValue]",
            ], "\(error.diagnostics)")
        }
    }

    @Test func badAppIdentity() {
        func appError(_ app: String) -> String? {
            loadError(#"{"app": \#(app), "hosts": ["a.com"], "routes": [{"name": "a", "path": "/a"}]}"#)
        }
        #expect(appError(#"{"teamId": "abc", "bundleId": "com.x.y", "scheme": "s"}"#)
                == #"t.json: at app.teamId: team ID "abc" must be 10 characters of A-Z and 0-9"#)
        #expect(appError(#"{"teamId": "A1B2C3D4E5", "bundleId": "shop", "scheme": "s"}"#)
                == #"t.json: at app.bundleId: "shop" is not a bundle id: reverse-DNS, e.g. com.example.app (A-Z a-z 0-9 - in dot-separated parts)"#)
        #expect(appError(#"{"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "Shop"}"#)
                == #"t.json: at app.scheme: scheme "Shop" must be lowercase [a-z][a-z0-9+.-]*"#)
        #expect(appError(#"{"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "1shop"}"#)
                == #"t.json: at app.scheme: scheme "1shop" must be lowercase [a-z][a-z0-9+.-]*"#)
        #expect(appError(#"{"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "javascript"}"#)
                == #"t.json: at app.scheme: scheme "javascript" is not an app's own scheme"#)
        #expect(appError(#"{"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "https"}"#)
                == #"t.json: at app.scheme: scheme "https" is not an app's own scheme"#)
    }

    /// An app that opens https links only leaves `scheme` out: every other scheme is refused,
    /// and the message names https alone.
    @Test func tableWithoutScheme() throws {
        let t = try RouteTable(json: #"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.x.y"}, "hosts": ["a.com"], "routes": [{"name": "a", "path": "/a/:id", "params": {"id": "int"}}]}"#, source: "t.json")
        #expect(t.app == AppIdentity(teamId: "A1B2C3D4E5", bundleId: "com.x.y", scheme: nil))
        #expect(t.check("https://A.com/a/7") == .accepted(CanonicalLink(canonical: "https://a.com/a/7", route: "a", params: [NamedValue(name: "id", value: "7")], query: [])))
        #expect(t.check("y://a/7") == .rejected(LinkRejection(code: .schemeNotAllowed, message: #"scheme "y" is not allowed (accepted: https)"#)))
        #expect(t.check("/a/7") == .rejected(LinkRejection(code: .malformed, message: "the link has no scheme (expected https://)")))
        #expect(!t.fingerprintText.contains("scheme"))
        let withScheme = try RouteTable(json: #"{"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.x.y", "scheme": "y"}, "hosts": ["a.com"], "routes": [{"name": "a", "path": "/a/:id", "params": {"id": "int"}}]}"#, source: "t.json")
        #expect(withScheme.check("/a/7") == .rejected(LinkRejection(code: .malformed, message: "the link has no scheme (expected https:// or y://)")))
        #expect(withScheme.fingerprintText != t.fingerprintText)
    }

    @Test func badQueryKeys() {
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"token": "string"}}"#))
                == #"t.json: at routes[0].query.token: query key "token" names a credential; secrets do not belong in links"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"a b": "string"}}"#))
                == #"t.json: at routes[0].query["a b"]: query key "a b" must be 1–64 of A-Z a-z 0-9 - . _ ~"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a", "query": {"utm_source": "string"}}"#, passthrough: #"["utm_source"]"#))
                == #"t.json: at routes[0].query.utm_source: query key "utm_source" is already in passthroughQuery"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a"}"#, passthrough: #"["Session"]"#))
                == #"t.json: at passthroughQuery[0]: query key "Session" names a credential; secrets do not belong in links"#)
        #expect(loadError(tableJSON(routes: #"{"name": "a", "path": "/a"}"#, passthrough: #"["x", "x"]"#))
                == #"t.json: at passthroughQuery[1]: duplicate query key "x""#)
    }

    @Test func messagesQuoteHostileTextEscaped() {
        let message = loadError(tableJSON(routes: #"{"name": "a", "path": "/a\u202Eb"}"#)) ?? ""
        #expect(!message.unicodeScalars.contains("\u{202E}"))
        #expect(message.contains(#"\u202e"#) || message.contains(#"\u202E"#))
    }
}

/// A JSON string literal for test fixtures.
func JSONQuote(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
