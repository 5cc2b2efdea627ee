import Testing
@testable import Storage

/// The Live Activity token registry, the same on both backends: update tokens by
/// activity, and dead as for devices (a 410 after the registration; for a liveactivity
/// campaign also a 400 BadDeviceToken), alive again when reported again.
@Suite struct LiveActivityTokenTests {
    func liveActivityCampaign(_ id: String) -> NewCampaign {
        var campaign = newCampaign(id)
        campaign.message = StoredMessage(pushType: "liveactivity", topic: "com.example.shop.push-type.liveactivity", priority: 10)
        campaign.app = "shop"
        return campaign
    }

    @Test(arguments: Backend.allCases) func updateTokensAreFoundByActivityAndDeadOnesLeftOut(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        let a = token(0xa1), b = token(0xa2), c = token(0xa3), other = token(0xb1)
        for (t, activity) in [(a, "act-1"), (b, "act-1"), (c, "act-1"), (other, "act-2")] {
            #expect(try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: t, kind: .update, activity: activity), atMilliseconds: 1_000_000) == nil)
        }
        _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: token(0xc1), kind: .pushToStart, activity: ""), atMilliseconds: 1_000_000)
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-1") == [a, b, c])
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-2") == [other])
        #expect(try storage.liveActivityTokens(app: "other", activity: "act-1").isEmpty)
        #expect(try storage.liveActivityTokens(app: "shop", activity: "").isEmpty, "push-to-start tokens are no activity's")

        // A liveactivity campaign: 410 (Apple's timestamp after the registration) and 400
        // BadDeviceToken kill the token.
        _ = try storage.insert(liveActivityCampaign("la"), deliveries: [a, b, c].map { NewDelivery(token: $0) }, now: 2000)
        let claimed = try storage.claim(limit: 3, now: 2000)
        let seq = claimed[0].campaign
        try storage.record([
            DeliveryUpdate(campaign: seq, index: 0, state: .delivered, status: 200, apnsID: "x", lease: claimed[0].lease),
            DeliveryUpdate(campaign: seq, index: 1, state: .unregistered, status: 410, reason: "Unregistered", timestampMilliseconds: 1_500_000, lease: claimed[1].lease),
            DeliveryUpdate(campaign: seq, index: 2, state: .failed, status: 400, reason: "BadDeviceToken", lease: claimed[2].lease),
        ], now: 2001)
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-1") == [a])
        // Reported again after that, it lives again.
        #expect(try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: b, kind: .update, activity: "act-1"), atMilliseconds: 3_000_000_000) != nil)
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-1") == [a, b])
        // A token reported for another activity moves there.
        _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: a, kind: .update, activity: "act-2"), atMilliseconds: 3_000_000_001)
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-2") == [other, a])
    }

    @Test(arguments: Backend.allCases) func aForgottenTokenIsNoActivitysAnyMore(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        let old = token(0xe1), kept = token(0xe2)
        for t in [old, kept] {
            _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: t, kind: .update, activity: "act"), atMilliseconds: 1_000_000)
        }
        #expect(try !storage.forgetLiveActivityToken(app: "other", token: old), "another app's registry is its own")
        #expect(try storage.forgetLiveActivityToken(app: "shop", token: old))
        #expect(try !storage.forgetLiveActivityToken(app: "shop", token: old), "already gone")
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act") == [kept])
    }

    @Test(arguments: Backend.allCases) func aBadDeviceTokenOfAnAlertCampaignKillsNothing(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        let t = token(0xd1)
        _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "", token: t, kind: .update, activity: "act"), atMilliseconds: 1_000_000)
        _ = try storage.insert(newCampaign("alert"), deliveries: [NewDelivery(token: t)], now: 2000)
        let claimed = try storage.claim(limit: 1, now: 2000)
        try storage.record([DeliveryUpdate(campaign: claimed[0].campaign, index: 0, state: .failed, status: 400, reason: "BadDeviceToken",
                                           lease: claimed[0].lease)], now: 2001)
        #expect(try storage.liveActivityTokens(app: "", activity: "act") == [t])
    }

    @Test(arguments: Backend.allCases) func tokensPastTheLimitsAreRefusedAndRenewalsAreNot(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        let limits = LiveActivityLimits(perActivity: 2, perApp: 3)
        func register(_ t: String, _ activity: String, kind: LiveActivityToken.Kind = .update, app: String = "shop",
                      replacing: String? = nil) throws -> LiveActivityRegistration {
            try storage.registerLiveActivityToken(LiveActivityToken(app: app, token: t, kind: kind, activity: activity),
                                                  atMilliseconds: 1_000_000, limits: limits, replacing: replacing)
        }
        #expect(try register(token(0x11), "act-1") == .registered(revived: nil))
        #expect(try register(token(0x12), "act-1") == .registered(revived: nil))
        #expect(try register(token(0x13), "act-1") == .activityFull(limit: 2))
        #expect(try register(token(0x12), "act-1") == .registered(revived: nil), "a renewal takes no new place")
        // A push-to-start token is no activity's: it counts toward the app only.
        #expect(try register(token(0x14), "", kind: .pushToStart) == .registered(revived: nil))
        #expect(try register(token(0x15), "act-2") == .appFull(limit: 3))
        #expect(try register(token(0x15), "act-2", app: "other") == .registered(revived: nil), "each app has its own places")
        // A token of the app moving to a full activity is refused; one moving to another activity is not.
        #expect(try register(token(0x14), "act-1") == .activityFull(limit: 2))
        #expect(try register(token(0x14), "act-2") == .registered(revived: nil))
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-1") == [token(0x11), token(0x12)])
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-2") == [token(0x14)])
        // The token a report replaces frees its place; one that frees no place in the full
        // activity changes nothing (the caller forgets the old token only once this is kept).
        #expect(try register(token(0x16), "act-1", replacing: token(0x14)) == .activityFull(limit: 2))
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act-2") == [token(0x14)], "a refused report loses nothing")
        #expect(try register(token(0x16), "act-1", replacing: token(0x12)) == .registered(revived: nil))
    }

    @Test(arguments: Backend.allCases) func theRetentionRemovesOldUpdateTokensInBatchesAndKeepsPushToStartTokens(_ backend: Backend) throws {
        let storage = try freshStorage(backend)
        for (i, time) in [1_000, 2_000, 3_000, 9_000].enumerated() {
            _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: token(0x21 + i), kind: .update, activity: "act"),
                                                      atMilliseconds: Int64(time))
        }
        _ = try storage.registerLiveActivityToken(LiveActivityToken(app: "shop", token: token(0x31), kind: .pushToStart, activity: ""), atMilliseconds: 1_000)
        #expect(try storage.purgeLiveActivityTokens(registeredBeforeMilliseconds: 5_000, limit: 2) == 2)
        #expect(try storage.purgeLiveActivityTokens(registeredBeforeMilliseconds: 5_000, limit: 2) == 1)
        #expect(try storage.purgeLiveActivityTokens(registeredBeforeMilliseconds: 5_000, limit: 2) == 0)
        #expect(try storage.liveActivityTokens(app: "shop", activity: "act") == [token(0x24)])
        // The push-to-start token is still the app's: forgetting it finds it.
        #expect(try storage.forgetLiveActivityToken(app: "shop", token: token(0x31)))
    }
}
