import APNs
import Payloads
import Synchronization

/// Sends a planned campaign in the background, a bounded number of devices at a time,
/// and records every device's outcome; a device whose request cannot be built is
/// recorded as failed with the reason, never dropped.
public final class CampaignRunner: Sendable {
    let store: InMemoryCampaignStore
    let metrics: Metrics
    let maxInFlight: Int
    let now: @Sendable () -> Double
    private let running = Atomic<Int>(0)
    private let executor = SendExecutor()

    public init(store: InMemoryCampaignStore, metrics: Metrics, maxInFlight: Int = 256,
                now: @escaping @Sendable () -> Double = wallClockSeconds) {
        self.store = store
        self.metrics = metrics
        self.maxInFlight = max(1, maxInFlight)
        self.now = now
    }

    /// Campaigns still sending.
    public var activeCampaigns: Int { running.load(ordering: .relaxed) }

    public func start(_ plan: CampaignPlan, id: String, sender: any NotificationSender) {
        running.add(1, ordering: .relaxed)
        metrics.adjustQueueDepth(by: plan.devices.count)
        Task.detached(executorPreference: executor) { [self] in
            await run(plan, id: id, sender: sender)
            store.finish(id, at: now())
            running.subtract(1, ordering: .relaxed)
        }
    }

    func run(_ plan: CampaignPlan, id: String, sender: any NotificationSender) async {
        let devices = plan.devices
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            func addNext() {
                let index = next
                next += 1
                group.addTask { [self] in
                    let outcome: DeviceOutcome
                    do throws(PayloadError) {
                        let request = try plan.request(for: devices[index])
                        let started = now()
                        let result = await sender.send(request)
                        if case .dryRun = result {} else { metrics.recordAPNsLatency(seconds: now() - started) }
                        outcome = DeviceOutcome(result)
                    } catch {
                        outcome = DeviceOutcome(state: .failed, reason: error.stableCode)
                    }
                    store.record(outcome, campaign: id, device: index)
                    metrics.recordNotification(result: outcome.state.rawValue, reason: outcome.reason ?? "")
                    metrics.adjustQueueDepth(by: -1)
                }
            }
            while next < devices.count && next < maxInFlight { addNext() }
            while await group.next() != nil {
                if next < devices.count { addNext() }
            }
        }
    }

    /// Waits until every campaign has finished or the deadline passes; true if all did.
    public func drain(deadlineSeconds: Double) async -> Bool {
        let deadline = now() + deadlineSeconds
        while activeCampaigns > 0 && now() < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return activeCampaigns == 0
    }
}
