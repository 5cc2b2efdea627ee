import HTTPServer
import Payloads
import StrictJSON

/// `POST /v1/notifications/preview`: the exact APNs requests, as `pushgate preview --json`
/// prints them; an invalid campaign is a 422 listing every problem.
enum PreviewEndpoint {
    static func register(in builder: inout APIRouterBuilder, planner: CampaignPlanner, metrics: Metrics) {
        builder.add("POST", "/v1/notifications/preview", operation: "notifications.preview") { request, _ in
            let json: JSON
            switch JSONBody.decode(request) {
            case .failure(let problem): return problem.response
            case .success(let parsed): json = parsed
            }
            switch planner.plan(json: json) {
            case .failure(let rejection):
                return CampaignProblems.problem(for: rejection, metrics: metrics).response
            case .success(let plan):
                do throws(PayloadError) {
                    var body = try CampaignPreview(plan: plan) { _ in APNsID.random() }.json
                    body.append(UInt8(ascii: "\n"))
                    return jsonResponse(body)
                } catch {
                    return CampaignProblems.problem(for: CampaignRejection(problems: [error]), metrics: metrics).response
                }
            }
        }
    }
}

enum CampaignProblems {
    /// A 1 MiB body of `"devices":[1,1,…]` has half a million problems; listing them all
    /// made a 75 MB answer and gigabytes of memory. The count is always exact.
    static let maxListed = Problem.maxListed

    /// 422 with each problem (up to `maxListed`) as a JSON pointer; a rejected deep link
    /// keeps its own code.
    static func problem(for rejection: CampaignRejection, metrics: Metrics) -> Problem {
        for problem in rejection.problems {
            if let code = problem.linkCode { metrics.recordLinkRejected(code: code.rawValue) }
        }
        let errors = rejection.problems.prefix(maxListed).map(\.diagnostic)
        let count = rejection.problems.count
        let summary = count == 1 ? errors[0].description
            : "\(count) problems in the campaign" + (count > maxListed ? " " + Problem.listedNote(maxListed) : "")
        return .validation(errors, detail: summary)
    }
}
