import Storage
import StrictJSON

/// The JSON of campaign status pages.
public enum CampaignJSON {
    /// RFC 3339 UTC with milliseconds, as every timestamp in the API.
    public static func timestamp(_ seconds: Double) -> String { rfc3339(seconds) }

    /// States as reported, in a fixed order.
    static let states: [DeliveryState] = DeliveryState.allCases

    static func detail(_ summary: CampaignSummary, rows: [DeliveryResultRow], page: Int, pageSize: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 512 + rows.count * 200)
        writeSummary(summary, to: &w)
        w.raw(",\"page\":")
        w.int(page)
        w.raw(",\"per_page\":")
        w.int(pageSize)
        w.raw(",\"results\":[")
        for (i, row) in rows.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.raw("{\"index\":")
            w.int(row.index)
            w.raw(",\"token\":")
            w.string(row.token)
            w.raw(",\"state\":")
            w.string(row.state.name)
            w.raw(",\"attempts\":")
            w.int(row.attempts)
            if let status = row.status { w.raw(",\"status\":"); w.int(status) }
            if let reason = row.reason { w.raw(",\"reason\":"); w.string(reason) }
            if let id = row.apnsID { w.raw(",\"apns_id\":"); w.string(id) }
            if let ts = row.timestampMilliseconds { w.raw(",\"timestamp_ms\":"); w.rawBytes(String(ts)) }
            if let next = row.nextAttemptAt { w.raw(",\"next_attempt_at\":"); w.string(rfc3339(next)) }
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("]}\n")
        return w.bytes
    }

    public static func list(_ summaries: [CampaignSummary], limit: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 256 + summaries.count * 300)
        w.raw("{\"campaigns\":[")
        for (i, summary) in summaries.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            writeSummary(summary, to: &w)
            w.byte(UInt8(ascii: "}"))
        }
        w.raw("],\"next\":")
        if summaries.count == limit, let last = summaries.last {
            w.string("/v1/campaigns?limit=\(limit)&before=\(last.seq)")
        } else {
            w.null()
        }
        w.raw("}\n")
        return w.bytes
    }

    /// The summary's members, leaving the object open for more.
    static func writeSummary(_ summary: CampaignSummary, to w: inout JSONWriter) {
        w.raw("{\"id\":")
        w.string(summary.id)
        w.raw(",\"status\":")
        w.string(summary.status)
        w.raw(",\"dry_run\":")
        w.bool(summary.dryRun)
        w.raw(",\"created_at\":")
        w.string(rfc3339(summary.createdAt))
        w.raw(",\"finished_at\":")
        if let finished = summary.finishedAt { w.string(rfc3339(finished)) } else { w.null() }
        w.raw(",\"devices\":")
        w.int(summary.devices)
        w.raw(",\"counts\":{")
        for (i, state) in states.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.string(state.name)
            w.byte(UInt8(ascii: ":"))
            w.int(summary.counts[state] ?? 0)
        }
        w.byte(UInt8(ascii: "}"))
    }
}
