import APNs
import HTTPServer
import Payloads
import StrictJSON

/// `POST /v1/campaigns` (202, sends in the background) and `GET /v1/campaigns/{id}`.
enum CampaignEndpoints {
    static let defaultPageSize = 100
    static let maxPageSize = 1000

    struct Senders: Sendable {
        /// As configured (real APNs, or dry run when the configuration says so).
        let configured: any NotificationSender
        /// For campaigns that ask for `"dry_run": true`.
        let dryRun: any NotificationSender
        /// True when the configuration itself is a dry run: then every campaign is one.
        let configuredIsDryRun: Bool
    }

    static func register(in builder: inout APIRouterBuilder, planner: CampaignPlanner, senders: Senders,
                         runner: CampaignRunner, metrics: Metrics) {
        builder.add("POST", "/v1/campaigns", operation: "campaigns.create") { request, _ in
            if case .failure(let problem) = JSONBody.decode(request) { return problem.response }
            let plan: CampaignPlan
            switch planner.plan(jsonBytes: request.body) {
            case .failure(let rejection): return CampaignProblems.problem(for: rejection, metrics: metrics).response
            case .success(let planned): plan = planned
            }
            let id = APNsID.random()
            let dryRun = plan.campaign.dryRun || senders.configuredIsDryRun
            runner.store.insert(CampaignRecord(id: id, createdAt: runner.now(), dryRun: dryRun,
                                               tokens: plan.devices.map(\.token),
                                               outcomes: Array(repeating: .pending, count: plan.devices.count)))
            runner.start(plan, id: id, sender: dryRun ? senders.dryRun : senders.configured)
            var w = JSONWriter()
            w.raw("{\"id\":")
            w.string(id)
            w.raw(",\"status_url\":")
            w.string("/v1/campaigns/" + id)
            w.raw(",\"devices\":")
            w.int(plan.devices.count)
            w.raw(",\"dry_run\":")
            w.bool(dryRun)
            w.raw("}\n")
            return jsonResponse(status: 202, w.bytes, headers: [("Location", "/v1/campaigns/" + id)])
        }

        builder.add("GET", "/v1/campaigns/{id}", operation: "campaigns.get") { request, parameters in
            let id = parameters["id"] ?? ""
            guard let record = runner.store.get(id) else { return Problem.notFound(request.path).response }
            switch page(request) {
            case .failure(let problem): return problem.response
            case .success(let (number, size)): return jsonResponse(render(record, page: number, pageSize: size))
            }
        }
    }

    static func page(_ request: HTTPRequest) -> Result<(Int, Int), Problem> {
        var errors: [Problem.FieldError] = []
        var number = 1
        var size = defaultPageSize
        if let text = request.queryValue("page") {
            if let n = Int(text), n >= 1 { number = n } else {
                errors.append(.init(pointer: "?page", code: "invalidParameter", detail: "page must be a whole number from 1"))
            }
        }
        if let text = request.queryValue("per_page") {
            if let n = Int(text), (1...maxPageSize).contains(n) { size = n } else {
                errors.append(.init(pointer: "?per_page", code: "invalidParameter", detail: "per_page must be from 1 to \(maxPageSize)"))
            }
        }
        for item in request.query where item.name != "page" && item.name != "per_page" {
            errors.append(.init(pointer: "?" + item.name, code: "unknownParameter", detail: "unknown query parameter; expected page or per_page"))
        }
        if !errors.isEmpty {
            return .failure(Problem(status: 400, code: errors.count == 1 ? errors[0].code : "invalidQuery", title: "Bad Request",
                                    detail: errors.map(\.detail).joined(separator: "; "), errors: errors))
        }
        return .success((number, size))
    }

    static func render(_ record: CampaignRecord, page: Int, pageSize: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 512 + min(pageSize, record.outcomes.count) * 160)
        w.raw("{\"id\":")
        w.string(record.id)
        w.raw(",\"status\":")
        w.string(record.status)
        w.raw(",\"dry_run\":")
        w.bool(record.dryRun)
        w.raw(",\"created_at\":")
        w.string(rfc3339(record.createdAt))
        w.raw(",\"finished_at\":")
        if let finished = record.finishedAt { w.string(rfc3339(finished)) } else { w.null() }
        w.raw(",\"devices\":")
        w.int(record.outcomes.count)
        w.raw(",\"counts\":{")
        let counts = record.counts
        for (i, state) in DeviceOutcome.State.allCases.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.string(state.rawValue)
            w.byte(UInt8(ascii: ":"))
            w.int(counts[state] ?? 0)
        }
        w.raw("},\"page\":")
        w.int(page)
        w.raw(",\"per_page\":")
        w.int(pageSize)
        w.raw(",\"results\":[")
        let start = min(record.outcomes.count, (page - 1) * pageSize)
        let end = min(record.outcomes.count, start + pageSize)
        for index in start..<end {
            if index > start { w.byte(UInt8(ascii: ",")) }
            let outcome = record.outcomes[index]
            w.raw("{\"index\":")
            w.int(index)
            w.raw(",\"token\":")
            w.string(record.tokens[index])
            w.raw(",\"state\":")
            w.string(outcome.state.rawValue)
            if let status = outcome.status { w.raw(",\"status\":"); w.int(status) }
            if let reason = outcome.reason { w.raw(",\"reason\":"); w.string(reason) }
            if let id = outcome.apnsID { w.raw(",\"apns_id\":"); w.string(id) }
            if let ts = outcome.timestampMilliseconds { w.raw(",\"timestamp_ms\":"); w.rawBytes(String(ts)) }
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("]}\n")
        return w.bytes
    }
}
