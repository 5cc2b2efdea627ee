import HTTPServer
import Payloads
import StrictJSON

/// `POST /v1/notifications/preview` (and `/v1/apps/{app}/notifications/preview`): the exact APNs requests, as `pushgate preview --json`
/// prints them; an invalid campaign is a 422 listing every problem.
enum PreviewEndpoint {
    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory, metrics: Metrics) {
        // The campaign names its app ("app"), as every campaign does; the path may name it too.
        builder.add("POST", "/v1/notifications/preview", operation: "notifications.preview") { request, parameters throws(Problem) in
            try preview(request, parameters, inPath: nil, apps: apps, metrics: metrics)
        }
        builder.add("POST", "/v1/apps/{app}/notifications/preview", operation: "notifications.preview") { request, parameters throws(Problem) in
            try preview(request, parameters, inPath: try apps.app(named: parameters["app"] ?? "", for: parameters.caller), apps: apps, metrics: metrics)
        }
    }

    static func preview(_ request: HTTPRequest, _ parameters: PathParameters, inPath: GatewayApp?, apps: AppDirectory,
                        metrics: Metrics) throws(Problem) -> HTTPResponse {
        let json = try JSONBody.decode(request)
        let app = try apps.campaignApp(json, for: parameters.caller, inPath: inPath)
        parameters.notes.app = app.name
        switch app.plan(json: json) {
        case .failure(let rejection):
            throw CampaignProblems.problem(for: rejection, app: app.name, metrics: metrics)
        case .success(let plan):
            do throws(PayloadError) {
                var body = try CampaignPreview(plan: plan) { _ in APNsID.random() }.json
                body.append(UInt8(ascii: "\n"))
                return jsonResponse(body)
            } catch {
                throw CampaignProblems.problem(for: CampaignRejection(problems: [error]), app: app.name, metrics: metrics)
            }
        }
    }
}

enum CampaignProblems {
    /// A 1 MiB body of `"devices":[1,1,…]` has half a million problems; listing them all
    /// made a 75 MB answer and gigabytes of memory. The count is always exact.
    static let maxListed = Problem.maxListed

    /// 422 with each problem (up to `maxListed`) as a JSON pointer; a rejected deep link
    /// keeps its own code (counted for `app`, whose table rejected it).
    static func problem(for rejection: CampaignRejection, app: String, metrics: Metrics) -> Problem {
        for problem in rejection.problems {
            if let code = problem.linkCode { metrics.recordLinkRejected(app: app, code: code.rawValue) }
        }
        let errors = rejection.problems.prefix(maxListed).map(\.diagnostic)
        let count = rejection.problems.count
        let summary = count == 1 ? errors[0].description
            : "\(count) problems in the campaign" + (count > maxListed ? " " + Problem.listedNote(maxListed) : "")
        return .validation(errors, detail: summary)
    }
}
