import Storage
import StrictJSON

/// The JSON of a campaign's status: the API's status pages, `pushgate campaigns --json`
/// and the `campaign.finished` webhook event all write it here.
public enum CampaignJSON {
    /// RFC 3339 UTC with milliseconds, as every timestamp in the API.
    public static func timestamp(_ seconds: Double) -> String { RFC3339.format(seconds) }

    /// States as reported, in a fixed order.
    static let states: [DeliveryState] = DeliveryState.allCases

    public static func detail(_ summary: CampaignSummary, rows: [DeliveryResultRow], page: Int, pageSize: Int, now: Double) -> [UInt8] {
        var w = JSONWriter(capacity: 512 + rows.count * 200)
        w.object { w in
            writeSummaryMembers(summary, now: now, to: &w)
            w.member("page", page)
            w.member("per_page", pageSize)
            w.member("results", array: { w in
                for row in rows {
                    w.object { w in
                        w.member("index", row.index)
                        w.member("token", row.token)
                        w.member("state", row.state.name)
                        w.member("attempts", row.attempts)
                        if let status = row.status { w.member("status", status) }
                        if let reason = row.reason { w.member("reason", reason) }
                        if let id = row.apnsID { w.member("apns_id", id) }
                        if let id = row.apnsUniqueID { w.member("apns_unique_id", id) }
                        // An answer from APNs came from the campaign's environment.
                        if row.status != nil, !summary.environment.isEmpty { w.member("environment", summary.environment) }
                        if let ts = row.timestampMilliseconds { w.member("timestamp_ms", Int(ts)) }
                        if let next = row.nextAttemptAt { w.member("next_attempt_at", timestamp(next)) }
                    }
                }
            })
        }
        w.raw("\n")
        return w.bytes
    }

    /// One campaign's summary (the answer to pause, resume and cancel).
    public static func summary(_ summary: CampaignSummary, now: Double) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.object { w in writeSummaryMembers(summary, now: now, to: &w) }
        w.raw("\n")
        return w.bytes
    }

    public static func list(_ summaries: [CampaignSummary], limit: Int, now: Double) -> [UInt8] {
        let next = summaries.count == limit ? summaries.last.map { "/v1/campaigns?limit=\(limit)&before=\($0.seq)" } : nil
        return list(summaries, next: next, now: now)
    }

    /// A page of campaigns and the link to the next one (nil on the last page).
    public static func list(_ summaries: [CampaignSummary], next: String?, now: Double) -> [UInt8] {
        var w = JSONWriter(capacity: 256 + summaries.count * 300)
        w.object { w in
            w.member("campaigns", array: { w in
                for summary in summaries {
                    w.object { w in writeSummaryMembers(summary, now: now, to: &w) }
                }
            })
            w.member("next", orNull: next)
        }
        w.raw("\n")
        return w.bytes
    }

    /// `GET /v1/campaigns/{id}/reasons`: devices by state and APNs reason, most first.
    public static func reasons(id: String, _ counts: [ReasonCount]) -> [UInt8] {
        var w = JSONWriter(capacity: 128 + counts.count * 64)
        w.object { w in
            w.member("id", id)
            w.member("reasons", array: { w in
                for count in counts {
                    w.object { w in
                        w.member("state", count.state.name)
                        w.member("reason", count.reason)
                        w.member("count", count.count)
                    }
                }
            })
        }
        w.raw("\n")
        return w.bytes
    }

    /// What a campaign sent (`GET /v1/campaigns/{id}/message`): the typed request members
    /// and the body every device without one of its own got, as JSON.
    public static func message(_ message: CampaignMessage) -> [UInt8] {
        var w = JSONWriter(capacity: 256 + message.body.count)
        w.object { w in
            w.member("id", message.id)
            w.member("app", orNull: message.app.isEmpty ? nil : message.app)
            w.member("push_type", message.message.pushType)
            w.member("topic", message.message.topic)
            w.member("priority", message.message.priority)
            w.member("expiration", orNull: message.message.expiration.map(Int.init))
            w.member("collapse_id", orNull: message.message.collapseId)
            w.member("channel", orNull: message.message.channel)
            // The planner wrote the body as JSON; anything else would be a store fault.
            if let parsed = try? JSONParser().parse(message.body) {
                w.key("payload")
                w.value(parsed)
            } else {
                w.member("payload", orNull: nil as String?)
            }
        }
        w.raw("\n")
        return w.bytes
    }

    /// The summary's members as of `now`, inside an object the caller opened.
    public static func writeSummaryMembers(_ summary: CampaignSummary, now: Double, to w: inout JSONWriter) {
        w.member("id", summary.id)
        w.member("status", summary.status(at: now).rawValue)
        w.member("app", orNull: summary.app.isEmpty ? nil : summary.app)
        w.member("environment", orNull: summary.environment.isEmpty ? nil : summary.environment)
        w.member("dry_run", summary.dryRun)
        w.member("created_at", timestamp(summary.createdAt))
        w.member("finished_at", orNull: summary.finishedAt.map(timestamp))
        w.member("send_at", orNull: summary.sendAt.map(timestamp))
        w.member("expires_at", orNull: summary.expiresAt.map(timestamp))
        w.member("lane", summary.lane.name)
        w.member("rate_per_second", orNull: summary.ratePerSecond)
        w.member("devices", summary.devices)
        if let channel = summary.channel { w.member("channel", channel) }
        // Only on a campaign that failed: a stored segment of it does not decode.
        if let failure = summary.failure { w.member("failure", failure) }
        w.member("not_sent", summary.notSent(at: now))
        w.member("counts", object: { w in
            for state in states {
                w.key(state.name)
                w.int(summary.counts[state] ?? 0)
            }
        })
    }
}
