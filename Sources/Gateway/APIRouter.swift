import HTTPServer

/// Path parameters captured by a route pattern such as `/v1/campaigns/{id}`, and who is
/// asking (the service fills it in once the key is checked).
public struct PathParameters: Sendable {
    var values: [String: String]
    public internal(set) var caller: Caller = .open
    /// What the handler tells the request log.
    public internal(set) var notes = RequestNotes()
    /// The query parameters the endpoint takes (`QueryParameters`); any other is refused.
    public internal(set) var queryNames: [String] = []
    /// Served for any `Host` also with no keys configured (`LoopbackOnly`).
    public internal(set) var anyHost = false
    public subscript(name: String) -> String? { values[name] }
}

/// An endpoint: its answer, or the problem it throws (`GatewayService` renders every
/// problem, in one place).
public typealias APIHandler = @Sendable (HTTPRequest, PathParameters) throws(Problem) -> HTTPResponse

/// A mutable builder whose `build()` returns a frozen, Sendable router (hummingbird's
/// pattern). Literal segments win over `{parameters}`; two patterns that would match the
/// same path for the same method are an error at build time.
public struct APIRouterBuilder {
    private var entries: [APIRouter.Entry] = []

    public init() {}

    /// `query`: the query parameters the endpoint takes; nil: `QueryParameters.taken`'s
    /// entry for the operation (none when it has no entry).
    /// `anyHost`: a public document whose answer depends on the `Host` (the AASA) is served
    /// for any host also with no keys configured, where other endpoints serve loopback only.
    public mutating func add(_ method: String, _ pattern: String, operation: String, public isPublic: Bool = false,
                             query: [String]? = nil, anyHost: Bool = false, _ handler: @escaping APIHandler) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part -> APIRouter.Segment in
            if part.hasPrefix("{") && part.hasSuffix("}") { return .parameter(String(part.dropFirst().dropLast())) }
            return .literal(String(part))
        }
        entries.append(APIRouter.Entry(method: method, pattern: pattern, segments: segments, operation: operation,
                                       isPublic: isPublic, queryNames: query ?? QueryParameters.taken[operation] ?? [],
                                       anyHost: isPublic && anyHost,
                                       handler: handler))
    }

    public func build() throws(APIRouter.ConflictError) -> APIRouter {
        for (i, a) in entries.enumerated() {
            for b in entries[(i + 1)...] where a.method == b.method && a.segments.count == b.segments.count {
                let clash = zip(a.segments, b.segments).allSatisfy { pair in
                    switch pair {
                    case (.literal(let x), .literal(let y)): return x == y
                    case (.parameter, .parameter): return true
                    default: return false
                    }
                }
                if clash { throw APIRouter.ConflictError(first: a.pattern, second: b.pattern, method: a.method) }
            }
        }
        return APIRouter(entries: entries)
    }
}

public struct APIRouter: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    struct Entry: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        /// A stable name for metrics and logs (`links.check`).
        let operation: String
        let isPublic: Bool
        let queryNames: [String]
        let anyHost: Bool
        let handler: APIHandler
    }

    public struct ConflictError: Error, Sendable, CustomStringConvertible {
        let first: String
        let second: String
        let method: String
        public var description: String { "\(method) \(first) and \(second) match the same paths" }
    }

    public enum Match: Sendable {
        case found(operation: String, isPublic: Bool, handler: APIHandler, parameters: PathParameters)
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    let entries: [Entry]

    /// HEAD is served wherever GET is (RFC 9110 §9.3.2) by the GET handler: the server
    /// sends its status and headers, `Content-Length` included, and no body.
    public func match(method: String, path: String) -> Match {
        let method = method == "HEAD" ? "GET" : method
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var best: (entry: Entry, parameters: [String: String], literals: Int)?
        var allowed: [String] = []
        for entry in entries where entry.segments.count == parts.count {
            var parameters: [String: String] = [:]
            var literals = 0
            var matched = true
            for (segment, part) in zip(entry.segments, parts) {
                switch segment {
                case .literal(let text):
                    if text != part { matched = false } else { literals += 1 }
                case .parameter(let name):
                    if part.isEmpty { matched = false } else { parameters[name] = String(part) }
                }
                if !matched { break }
            }
            guard matched else { continue }
            if entry.method != method {
                if !allowed.contains(entry.method) { allowed.append(entry.method) }
                continue
            }
            if best == nil || literals > best!.literals { best = (entry, parameters, literals) }
        }
        if let best {
            return .found(operation: best.entry.operation, isPublic: best.entry.isPublic,
                          handler: best.entry.handler,
                          parameters: PathParameters(values: best.parameters, queryNames: best.entry.queryNames,
                                                     anyHost: best.entry.anyHost))
        }
        if !allowed.isEmpty {
            if allowed.contains("GET") { allowed.append("HEAD") }
            return .methodNotAllowed(allowed: allowed.sorted())
        }
        return .notFound
    }
}
