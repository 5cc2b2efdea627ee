import HTTPServer
import Storage
import StrictJSON

/// `GET /v1/campaigns?app=shop&status=sending,paused`: a page of the caller's campaigns,
/// newest first, of one app and in some states. The app is a column the store filters
/// on; the state depends on the clock (a scheduled campaign becomes sending at its
/// `send_at`), so it is read from each summary as the page is scanned. A scan reads at
/// most `maxScanned` campaigns per request, so a rare state never makes one request read
/// the whole history: the page may then hold fewer than `limit` with a `next` link that
/// goes on from where the scan stopped.
struct CampaignListFilter: Sendable, Equatable {
    static let maxScanned = 1000

    var limit: Int
    var before: Int64?
    var app: String?
    /// nil: every state.
    var statuses: [CampaignStatus]?

    static func read(_ request: HTTPRequest, limit: Int, before: Int64?) throws(Problem) -> CampaignListFilter {
        var errors: [Diagnostic] = []
        var filter = CampaignListFilter(limit: limit, before: before)
        // Each is given once (`QueryParameters` refuses a repeated one first).
        if let item = request.query.first(where: { $0.name == "app" }) {
            if AppName.isValid(item.value) {
                filter.app = item.value
            } else {
                errors.append(Diagnostic(.invalidValue, at: .parameter("app"),
                                         "\(TextSafety.quoted(TextSafety.excerpt(item.value))) is not an app name (\(AppName.rule))"))
            }
        }
        if let item = request.query.first(where: { $0.name == "status" }) {
            var statuses: [CampaignStatus] = []
            for name in item.value.split(separator: ",", omittingEmptySubsequences: false) {
                if let status = CampaignStatus(rawValue: String(name)) {
                    if !statuses.contains(status) { statuses.append(status) }
                } else {
                    errors.append(Diagnostic(.invalidValue, at: .parameter("status"),
                                             "unknown state \(JSONWriter.quoted(TextSafety.excerpt(String(name)))); expected one or more (comma-separated) of: "
                                             + CampaignStatus.allCases.map(\.rawValue).joined(separator: ", ")))
                }
            }
            filter.statuses = statuses
        }
        guard errors.isEmpty else { throw .invalidQuery(errors) }
        return filter
    }

    struct Page {
        var campaigns: [CampaignSummary]
        /// Where the next page starts (its `before`); nil on the last page.
        var next: Int64?
    }

    typealias Fetch = (_ limit: Int, _ before: Int64?, _ owner: String?, _ app: String?) throws(StorageError) -> [CampaignSummary]

    func page(owner: String?, now: Double, fetch: Fetch) throws(StorageError) -> Page {
        guard let statuses else {
            let list = try fetch(limit, before, owner, app)
            return Page(campaigns: list, next: list.count == limit ? list.last?.seq : nil)
        }
        var found: [CampaignSummary] = []
        var cursor = before
        var scanned = 0
        while scanned < Self.maxScanned {
            let batch = try fetch(min(max(limit, 100), Self.maxScanned - scanned), cursor, owner, app)
            for summary in batch {
                scanned += 1
                cursor = summary.seq
                if statuses.contains(summary.status(at: now)) {
                    found.append(summary)
                    // Full: the next page starts after this one.
                    if found.count == limit { return Page(campaigns: found, next: summary.seq) }
                }
            }
            // The store had no more: this is the last page.
            if batch.count < min(max(limit, 100), Self.maxScanned - (scanned - batch.count)) { return Page(campaigns: found, next: nil) }
        }
        return Page(campaigns: found, next: cursor)
    }

    /// The `next` link: the same filter from `before`.
    func nextPath(_ before: Int64) -> String {
        var path = "/v1/campaigns?limit=\(limit)&before=\(before)"
        if let app { path += "&app=" + app }
        if let statuses { path += "&status=" + statuses.map(\.rawValue).joined(separator: ",") }
        return path
    }
}
