/// What pause, resume and cancel do to a campaign, the same for every backend.
public enum LifecycleDecision: Sendable, Equatable {
    /// Set the campaign's control to this.
    case set(CampaignControl)
    /// Nothing to write: answer this.
    case answer(LifecycleOutcome)
}

extension CampaignSummary {
    /// `action` on this campaign at `now`: idempotent (`unchanged`), refused once finished
    /// (a finished campaign can still be found cancelled: cancelling it again is unchanged).
    public func decide(_ action: LifecycleAction, at now: Double) -> LifecycleDecision {
        let status = status(at: now)
        switch action {
        case .pause:
            if status.isFinal { return .answer(.refused(self)) }
            if control == .paused { return .answer(.unchanged(self)) }
            return .set(.paused)
        case .resume:
            if status.isFinal { return .answer(.refused(self)) }
            if control == .running { return .answer(.unchanged(self)) }
            return .set(.running)
        case .cancel:
            if control == .cancelled { return .answer(.unchanged(self)) }
            if status.isFinal { return .answer(.refused(self)) }
            return .set(.cancelled)
        }
    }
}
