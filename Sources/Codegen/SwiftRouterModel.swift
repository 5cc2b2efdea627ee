import DeepLinks
import StrictJSON

/// The Swift shape of a route table: one case per route, its labels and their types,
/// checked so that the generated file compiles and no two names collide.
struct SwiftRouterModel {
    enum ValueKind {
        case int, uuid, string
        /// A generated `String`-backed enum: its type name and (case, raw value) pairs.
        case choice(typeName: String, cases: [(name: String, raw: String)])
        /// A wildcard tail: `[String]`, one element per segment.
        case segments

        var swiftType: String {
            switch self {
            case .int: return "Int"
            case .uuid: return "UUID"
            case .string: return "String"
            case .choice(let name, _): return name
            case .segments: return "[String]"
            }
        }
    }

    /// A path parameter or the wildcard tail.
    struct PathValue {
        let name: String  // as the gateway reports it ("*" for the tail)
        let label: String
        let kind: ValueKind
        let segmentIndex: Int
    }

    struct QueryValue {
        let key: String
        let label: String
        let kind: ValueKind
        let required: Bool
    }

    struct Case {
        let route: Route
        let name: String
        let path: [PathValue]
        let query: [QueryValue]
    }

    let typeName: String
    let cases: [Case]
    /// Passthrough keys and their property names.
    let passthrough: [(key: String, label: String)]

    static let wildcardLabel = "segments"
    static let passthroughLabel = "passthrough"
    static let passthroughType = "Passthrough"
    /// Members of the generated type: a route case may not take one of these names.
    static let reservedMembers: Set<String> = [
        "url", "canonicalString", "routeName", "parameters", "queryItems", "tableFingerprint", "table",
        "typed", "parts", "int", "uuid", "choice", "mismatch", "passthroughItems", "hash", "hashValue",
    ]
    /// Types a `--type` may not be named (the file uses them, or Swift reserves them).
    static let reservedTypeNames: Set<String> = [
        "URL", "UUID", "String", "Int", "Error", "Foundation", "Swift", "Optional", "Array", "Result",
    ]

    init(table: RouteTable, typeName: String) throws(CodegenError) {
        try Self.checkTypeName(typeName)
        self.typeName = typeName
        var nestedTypes: [String: String] = [Self.passthroughType: "the passthrough keys' struct"]
        var caseNames: [String: Int] = [:]
        var cases: [Case] = []
        for (i, route) in table.routes.enumerated() {
            let place = "routes[\(i)].name"
            let name = SwiftNames.lowerCamel(route.name)
            guard SwiftNames.isIdentifier(name) else {
                throw CodegenError(place, "route name \(TextSafety.quoted(route.name)) does not make a Swift identifier (it becomes \(TextSafety.quoted(name)))")
            }
            if SwiftNames.keywords.contains(name) {
                throw CodegenError(place, "route name \(TextSafety.quoted(route.name)) becomes the Swift keyword `\(name)`; rename the route")
            }
            if Self.reservedMembers.contains(name) {
                throw CodegenError(place, "route name \(TextSafety.quoted(route.name)) becomes `\(name)`, which the generated type uses for a member of its own; rename the route")
            }
            if let earlier = caseNames[name] {
                throw CodegenError(place, "route name \(TextSafety.quoted(route.name)) becomes the Swift case `\(name)`, as routes[\(earlier)] (\(TextSafety.quoted(table.routes[earlier].name))) does")
            }
            caseNames[name] = i

            var labels: [String: String] = [:]  // label → what took it
            func claim(_ label: String, for what: String, at place: String) throws(CodegenError) {
                guard SwiftNames.isIdentifier(label) else {
                    throw CodegenError(place, "\(what) does not make a Swift identifier (it becomes \(TextSafety.quoted(label)))")
                }
                if let other = labels[label] {
                    throw CodegenError(place, "\(what) becomes the label `\(label)` of case `\(name)`, as \(other) does")
                }
                labels[label] = what
            }
            func kind(_ type: ValueType, key: String, at place: String) throws(CodegenError) -> ValueKind {
                switch type {
                case .int: return .int
                case .uuid: return .uuid
                case .slug, .string: return .string
                case .oneOf(let values):
                    let typeName = SwiftNames.upperCamel(route.name) + SwiftNames.upperCamel(key)
                    if let other = nestedTypes[typeName] {
                        throw CodegenError(place, "the values of \(TextSafety.quoted(key)) become the type `\(typeName)`, as \(other) does")
                    }
                    nestedTypes[typeName] = "the values of \(TextSafety.quoted(key)) in route \(TextSafety.quoted(route.name))"
                    var seen: [String: String] = [:]
                    var cases: [(name: String, raw: String)] = []
                    for value in values {
                        var caseName = SwiftNames.lowerCamel(value)
                        if let first = caseName.unicodeScalars.first, ("0"..."9").contains(first) { caseName = "_" + caseName }
                        guard SwiftNames.isIdentifier(caseName) else {
                            throw CodegenError(place, "value \(TextSafety.quoted(value)) has no ASCII letters or digits to name a Swift case")
                        }
                        if let other = seen[caseName] {
                            throw CodegenError(place, "values \(TextSafety.quoted(other)) and \(TextSafety.quoted(value)) both become the Swift case `\(caseName)`")
                        }
                        seen[caseName] = value
                        cases.append((caseName, value))
                    }
                    return .choice(typeName: typeName, cases: cases)
                }
            }

            var path: [PathValue] = []
            for (k, segment) in route.segments.enumerated() {
                switch segment {
                case .literal: continue
                case .parameter(let param, let type):
                    let at = "routes[\(i)].params.\(param)"
                    let label = SwiftNames.lowerCamel(param)
                    try claim(label, for: "parameter \(TextSafety.quoted(param))", at: at)
                    path.append(PathValue(name: param, label: label, kind: try kind(type, key: param, at: at), segmentIndex: k))
                case .wildcard:
                    try claim(Self.wildcardLabel, for: "the wildcard tail", at: "routes[\(i)].path")
                    path.append(PathValue(name: Route.wildcardParameterName, label: Self.wildcardLabel, kind: .segments, segmentIndex: k))
                }
            }
            var query: [QueryValue] = []
            for parameter in route.query {
                let at = "routes[\(i)].query.\(parameter.key)"
                let label = SwiftNames.lowerCamel(parameter.key)
                try claim(label, for: "query key \(TextSafety.quoted(parameter.key))", at: at)
                query.append(QueryValue(key: parameter.key, label: label, kind: try kind(parameter.type, key: parameter.key, at: at),
                                        required: parameter.required))
            }
            if !table.passthroughQuery.isEmpty {
                try claim(Self.passthroughLabel, for: "the passthrough keys", at: "routes[\(i)]")
            }
            cases.append(Case(route: route, name: name, path: path, query: query))
        }
        var passthrough: [(key: String, label: String)] = []
        var passthroughLabels: [String: String] = [:]
        for (i, key) in table.passthroughQuery.enumerated() {
            let label = SwiftNames.lowerCamel(key)
            guard SwiftNames.isIdentifier(label) else {
                throw CodegenError("passthroughQuery[\(i)]", "query key \(TextSafety.quoted(key)) does not make a Swift identifier (it becomes \(TextSafety.quoted(label)))")
            }
            if let other = passthroughLabels[label] {
                throw CodegenError("passthroughQuery[\(i)]", "query keys \(TextSafety.quoted(other)) and \(TextSafety.quoted(key)) both become the property `\(label)`")
            }
            passthroughLabels[label] = key
            passthrough.append((key, label))
        }
        self.cases = cases
        self.passthrough = passthrough
    }

    static func checkTypeName(_ name: String) throws(CodegenError) {
        guard SwiftNames.isIdentifier(name) else {
            throw CodegenError("--type", "\(TextSafety.quoted(name)) is not a Swift identifier ([A-Za-z_][A-Za-z0-9_]*)")
        }
        if SwiftNames.keywords.contains(name) {
            throw CodegenError("--type", "\(TextSafety.quoted(name)) is a Swift keyword")
        }
        if reservedTypeNames.contains(name) {
            throw CodegenError("--type", "\(TextSafety.quoted(name)) is a type the generated file uses itself")
        }
    }
}
