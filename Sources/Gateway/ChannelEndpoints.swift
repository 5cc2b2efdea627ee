import APNs
import Payloads
import HTTPServer
import StrictJSON

/// Finds an app's channel management client in an environment; nil when channels cannot
/// be managed (a dry run: channels live at Apple).
public typealias ChannelClientLookup = @Sendable (_ app: String, _ environment: APNsEnvironment) -> ChannelManagementClient?

/// `/v1/channels` (list, create) and `/v1/channels/{channel}` (show, delete), and the same
/// under `/v1/apps/{app}`: an app's broadcast channels at Apple's management API.
///
/// The request is checked where it arrives (an I/O thread); the call to Apple is then
/// handed to the server's upstream pool (`server.upstreamWorkers`), whose thread waits for
/// Apple's answer (at most `apns.requestTimeoutSeconds` per attempt). Neither the I/O
/// threads nor the workers of ordinary long requests ever wait on Apple; when every
/// upstream worker is busy and `server.upstreamQueue` calls wait, one more is answered 503
/// `upstreamBusy` at once.
enum ChannelEndpoints {
    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory, clients: ChannelClientLookup?) {
        builder.addPerApp("GET", "/channels", operation: "channels.list", apps: apps) { request, _, app throws(Problem) in
            try perform(request, app: app, clients: clients) { _ in .list }
        }
        builder.addPerApp("POST", "/channels", operation: "channels.create", apps: apps) { request, _, app throws(Problem) in
            try perform(request, app: app, clients: clients, bodyEnvironment: true) { body throws(Problem) in
                guard let body else { throw .validation([Diagnostic(.missing, at: .pointer(.root), "a JSON body is required")]) }
                var reader = ConfigReader(document: nil)
                let object = reader.section(body, at: .root, keys: ["message_storage_policy", "environment"])
                guard object["message_storage_policy"] != nil || !reader.isValid else {
                    throw .validation(reader.diagnostics + [Diagnostic(.missing, at: .pointer(.root.appending("message_storage_policy")),
                        "give Apple's message-storage-policy: 0 (no message stored) or 1 (most recent message stored)")])
                }
                let value = reader.integer(object, "message_storage_policy", at: .root, in: 0...1, default: nil)
                guard reader.isValid, let value, let policy = ChannelStoragePolicy(rawValue: value) else {
                    throw .validation(reader.diagnostics)
                }
                return .create(policy)
            }
        }
        for (method, operation) in [("GET", "channels.show"), ("DELETE", "channels.delete")] {
            builder.addPerApp(method, "/channels/{channel}", operation: operation, apps: apps) { request, parameters, app throws(Problem) in
                try perform(request, app: app, clients: clients) { _ throws(Problem) in
                    let id = decodedChannelId(parameters["channel"] ?? "")
                    if let problem = BroadcastChannelID.problem(with: id) {
                        throw .validation([Diagnostic(.invalidChannelId, at: .parameter("channel"), problem)])
                    }
                    return method == "GET" ? .read(channelId: id) : .delete(channelId: id)
                }
            }
        }
    }

    /// A channel id in a path: its `/` cannot stand there (the path is decoded before it is
    /// split, so not even as `%2F`), so a path takes the id in base64url too: `_` for `/`
    /// and `-` for `+` (standard base64 has neither, so nothing is ambiguous).
    static func decodedChannelId(_ segment: String) -> String {
        segment.replacing("_", with: "/").replacing("-", with: "+")
    }

    /// Reads the environment (`?environment=` or the create body's `environment`), builds
    /// the operation, asks Apple and answers.
    static func perform(_ request: HTTPRequest, app: GatewayApp, clients: ChannelClientLookup?, bodyEnvironment: Bool = false,
                        _ make: (JSON?) throws(Problem) -> ChannelOperation) throws(Problem) -> HTTPResponse {
        var environmentName: String?
        var body: JSON?
        if bodyEnvironment {
            if !request.body.isEmpty || request.header("content-type") != nil {
                body = try JSONBody.decode(request)
            }
            if let value = body?.objectValue?["environment"] {
                guard let text = value.stringValue else {
                    throw .validation([Diagnostic(.wrongType, at: .pointer(.root.appending("environment")), "expected a string, found \(value.kindDescription)")])
                }
                environmentName = text
            }
        } else {
            // Given once at most (`QueryParameters`); not one of Apple's environments is a bad query.
            environmentName = request.queryValue("environment")
            if environmentName.map({ APNsEnvironment(rawValue: $0) == nil }) ?? false {
                throw .invalidQuery([Diagnostic(.invalidValue, at: .parameter("environment"), "expected \"sandbox\" or \"production\"")])
            }
        }
        var environment = app.environment
        if let environmentName {
            guard let chosen = APNsEnvironment(rawValue: environmentName), app.environments.contains(chosen) else {
                let message = "app \(JSONWriter.quoted(app.name)) sends in \(app.environments.map { JSONWriter.quoted($0.rawValue) }.joined(separator: " and ")) only (apns.environments), not \(JSONWriter.quoted(TextSafety.excerpt(environmentName, limit: 64)))"
                // 422, not 400: the value is one of Apple's; the configuration refuses it.
                let location: DiagnosticLocation = bodyEnvironment ? .pointer(.root.appending("environment")) : .parameter("environment")
                throw .validation([Diagnostic(.invalidValue, at: location, message)])
            }
            environment = chosen
        }
        let operation = try make(body)
        guard let client = clients?(app.name, environment) else { throw .channelsUnavailable }
        let appName = app.name
        return .handOff(throwing: { [environment] () throws(Problem) in
            let result = runAndWait { await client.perform(operation) }
            switch result.outcome {
            case .success(let answer):
                let status = if case .created = answer { 201 } else { 200 }
                return jsonResponse(status: status, ChannelJSON.render(answer, app: appName, environment: environment, requestId: result.requestId))
            case .failure(let failure):
                throw .channelFailure(failure, requestId: result.requestId, operation: operation)
            }
        }, busy: .upstreamBusy)
    }
}

extension DiagnosticCode {
    /// The gateway cannot manage channels: it is a dry run (channels live at Apple).
    public static let channelsUnavailable = DiagnosticCode(rawValue: "channelsUnavailable")
    /// APNs refused a channel request; `errors[]` holds Apple's reason.
    public static let apnsRefused = DiagnosticCode(rawValue: "apnsRefused")
    /// APNs could not be asked or gave no answer; `errors[]` holds pushgate's delivery code.
    public static let apnsUnavailable = DiagnosticCode(rawValue: "apnsUnavailable")
    /// Every upstream worker waits on Apple and the upstream queue is full.
    public static let upstreamBusy = DiagnosticCode(rawValue: "upstreamBusy")
}

extension Problem {
    /// 503: `server.upstreamWorkers` calls wait on Apple and `server.upstreamQueue` more
    /// are queued; nothing was sent.
    static let upstreamBusy = Problem(status: 503, code: .upstreamBusy, title: "Service Unavailable",
                                      detail: "every worker waiting on Apple's management API is busy and its queue is full (server.upstreamWorkers, server.upstreamQueue); nothing was sent, retry shortly",
                                      headers: [("Retry-After", "5")])

    static var channelsUnavailable: Problem {
        Problem(status: 409, code: .channelsUnavailable, title: "Conflict",
                detail: "this gateway is a dry run (apns.dryRun): channels live at Apple, and managing them needs real credentials")
    }

    /// `ChannelNotRegistered` is 404; Apple's other refusals 502; no answer 503.
    static func channelFailure(_ failure: ChannelFailure, requestId: String?, operation: ChannelOperation) -> Problem {
        let request = requestId.map { " (apns-request-id \($0))" } ?? ""
        let location: DiagnosticLocation = operation.channelId == nil ? .none : .parameter("channel")
        let diagnostic = Diagnostic(DiagnosticCode(rawValue: failure.code), at: location, failure.message + request)
        switch failure {
        case .refused(_, let reason) where reason == .channelNotRegistered:
            return Problem(status: 404, code: .notFound, title: "Not Found", detail: diagnostic.description, errors: [diagnostic])
        case .refused:
            return Problem(status: 502, code: .apnsRefused, title: "Bad Gateway", detail: diagnostic.description, errors: [diagnostic])
        case .transport:
            return Problem(status: 503, code: .apnsUnavailable, title: "Service Unavailable", detail: diagnostic.description, errors: [diagnostic])
        }
    }
}
