#if canImport(Glibc)
import Glibc
#endif
import PostgresStorage
import Storage
import Timing

/// `PushgateBench claim-time DEVICES [POSTGRES_URL]`: the storage alone, no network. One
/// campaign of DEVICES devices is inserted, then the dispatcher's turn — record the last
/// claim's results as delivered, claim the next 500, one transaction — is timed 200 times
/// from the campaign's middle. Prints the insert's time and the turn's median and 90th
/// percentile, so a run at 100,000 and one at 10,000,000 show whether a claim's cost grows
/// with the campaign. SQLite in a temporary file (synchronous=FULL) unless a URL is given.
enum ClaimBenchmark {
    static let turns = 200
    static let batch = 500

    static func run(devices: Int, postgresURL: String?) -> Bool {
        let lease = LeaseTerms(owner: "bench/1/0", seconds: 300)
        let storage: any CampaignStorage
        var path: String?
        do throws(StorageError) {
            if let postgresURL {
                storage = try PostgresCampaignStorage(options: .init(url: postgresURL, poolSize: 2, instance: lease.owner, clock: SystemClock()))
            } else {
                let file = "/tmp/pushgate-claim-bench-\(getpid()).db"
                path = file
                storage = try SQLiteCampaignStorage(path: file)
            }
        } catch {
            print("claim-time: cannot open the storage: \(error)")
            return false
        }
        defer { if let path { for suffix in ["", "-wal", "-shm", ".lock"] { unlink(path + suffix) } } }
        let campaign = NewCampaign(id: "claim-bench-\(getpid())-\(devices)", createdAt: 1, dryRun: false,
                                   message: StoredMessage(pushType: "alert", topic: "com.example.shop", priority: 10),
                                   body: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsIDPrefix: "01234567-89ab-4cde-8f01-")
        let tokens = (0..<devices).lazy.map { i in NewDelivery(token: token(i)) }
        let insertStart = monotonicNanoseconds()
        do throws(StorageError) {
            _ = try storage.insert(campaign, deliveries: tokens, now: 1)
        } catch {
            print("claim-time: insert failed: \(error)")
            return false
        }
        let insertSeconds = Double(monotonicNanoseconds() - insertStart) / 1e9
        var claimed: [ClaimedDelivery] = []
        var samples: [UInt64] = []
        var now = 2.0
        // Up to the campaign's middle without timing, then the timed turns.
        let skip = max(0, devices / 2 / batch - turns / 2)
        for turn in 0..<(skip + turns) {
            let updates = claimed.map { claim in
                var update = DeliveryUpdate(campaign: claim.campaign, index: claim.index, state: .delivered, lease: claim.lease)
                update.status = 200
                update.apnsID = CampaignMessage.apnsID(prefix: "01234567-89ab-4cde-8f01-", index: claim.index)
                return update
            }
            now += 0.001
            let start = monotonicNanoseconds()
            do throws(StorageError) {
                claimed = try storage.recordAndClaim(updates, claimLimit: batch, lease: lease, now: now)
            } catch {
                print("claim-time: turn failed: \(error)")
                return false
            }
            if turn >= skip { samples.append(monotonicNanoseconds() - start) }
            if claimed.isEmpty { break }
        }
        samples.sort()
        guard !samples.isEmpty else { return false }
        let p90 = samples[min(samples.count - 1, samples.count * 9 / 10)]
        print(String(format: "claim-time %@ %d devices: insert %.1f s (%.1f µs/device); turn (record %d + claim %d) median %.2f ms, p90 %.2f ms over %d turns",
                     postgresURL == nil ? "sqlite" : "postgres", devices, insertSeconds, insertSeconds * 1e6 / Double(max(devices, 1)),
                     batch, batch, Double(median(samples)) / 1e6, Double(p90) / 1e6, samples.count))
        return true
    }

    /// 64 lowercase hex digits, distinct per index.
    static func token(_ i: Int) -> String {
        let hex = String(i, radix: 16)
        return String(repeating: "a", count: 64 - hex.count) + hex
    }
}
