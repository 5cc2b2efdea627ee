import APNs
import Foundation
import Synchronization
import Testing
import TestSupport
import Crypto

/// A `ProviderTokenStore` in memory: what several processes sharing one storage see.
final class MemoryTokenStore: ProviderTokenStore {
    let states = Mutex<[SigningIdentity: SharedTokenState]>([:])
    let updates = Atomic<Int>(0)

    func load(_ identity: SigningIdentity) throws(ProviderTokenStoreError) -> SharedTokenState {
        states.withLock { $0[identity] ?? SharedTokenState() }
    }

    func update(_ identity: SigningIdentity,
                _ change: (SharedTokenState) -> SharedTokenState?) throws(ProviderTokenStoreError) -> SharedTokenState {
        states.withLock { states in
            let current = states[identity] ?? SharedTokenState()
            guard let next = change(current) else { return current }
            updates.add(1, ordering: .relaxed)
            states[identity] = next
            return next
        }
    }
}

/// A store that always fails (the database is gone).
struct BrokenTokenStore: ProviderTokenStore {
    func load(_ identity: SigningIdentity) throws(ProviderTokenStoreError) -> SharedTokenState {
        throw ProviderTokenStoreError("disk I/O error")
    }
    func update(_ identity: SigningIdentity,
                _ change: (SharedTokenState) -> SharedTokenState?) throws(ProviderTokenStoreError) -> SharedTokenState {
        throw ProviderTokenStoreError("disk I/O error")
    }
}

@Suite struct SharedProviderTokenTests {
    let key: SigningKey
    init() throws { key = try SigningKey.load(file: FakeAPNs.keyFile) }

    func manager(_ store: any ProviderTokenStore, _ clock: ManualClock, key: SigningKey? = nil) -> ProviderTokenManager {
        ProviderTokenManager(key: key ?? self.key, teamId: FakeAPNs.teamId, keyId: FakeAPNs.keyId, clock: clock, store: store)
    }

    @Test func processesSharingAStoreSignWithOneTokenPerWindow() throws {
        let store = MemoryTokenStore()
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let first = manager(store, clock)
        let token = try first.currentToken()
        // A second process (a restart, `pushgate send`, another instance) reuses it.
        let second = manager(store, clock)
        clock.advance(seconds: 30 * 60)
        #expect(try second.currentToken() == token)
        #expect(second.mintedCount == 0)
        // Past 50 minutes whoever asks first mints; the other adopts it at its next check.
        clock.advance(seconds: 21 * 60)
        let fresh = try second.currentToken()
        #expect(fresh != token && fresh.issuedAt == 1_700_000_000 + 51 * 60)
        #expect(try first.currentToken() == fresh)
        #expect(first.mintedCount == 1 && second.mintedCount == 1)
        #expect(store.updates.load(ordering: .relaxed) == 2)
    }

    @Test func theMintRechecksUnderTheLock() async throws {
        let store = MemoryTokenStore()
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let managers = (0..<16).map { _ in manager(store, clock) }
        let tokens = await withTaskGroup(of: String?.self) { group in
            for m in managers { group.addTask { try? m.currentToken().compact } }
            var all: [String?] = []
            for await t in group { all.append(t) }
            return all
        }
        #expect(Set(tokens.compactMap { $0 }).count == 1 && tokens.count == 16)
        #expect(managers.reduce(0) { $0 + $1.mintedCount } == 1, "16 processes, one mint")
    }

    @Test func aNewKeyUnderTheSameKeyIdIsANewToken() throws {
        let store = MemoryTokenStore()
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let old = manager(store, clock)
        let replaced = manager(store, clock, key: try SigningKey.ephemeral())
        #expect(old.identity.keyId == replaced.identity.keyId)
        #expect(old.identity.keyFingerprint != replaced.identity.keyFingerprint)
        #expect(old.identity.keyFingerprint.count == 64)
        #expect(try old.currentToken() != replaced.currentToken())
    }

    @Test func anExpiredTokenIsReplacedOnceAndNotBeforeTwentyMinutes() throws {
        let store = MemoryTokenStore()
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let a = manager(store, clock), b = manager(store, clock)
        let token = try a.currentToken()
        #expect(try b.refresh(after: token) == nil, "19-minute floor: nothing to retry with")
        clock.advance(seconds: 21 * 60)
        let fresh = try #require(try a.refresh(after: token))
        #expect(try b.refresh(after: token) == fresh, "b takes a's new token instead of minting its own")
        #expect(a.mintedCount + b.mintedCount == 2)
    }

    @Test func tooManyUpdatesPausesEveryProcessUntilTheWindowHasPassed() throws {
        let store = MemoryTokenStore()
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let a = manager(store, clock)
        let token = try a.currentToken()
        clock.advance(seconds: 5 * 60)
        #expect(a.pausedUntil() == nil)
        let until = a.pauseAfterTooManyUpdates(token)
        #expect(until == 1_700_000_000 + 20 * 60, "20 minutes after the rejected token was issued")
        #expect(a.pausedUntil() == until)
        let b = manager(store, clock)
        _ = try b.currentToken()
        #expect(b.pausedUntil() == until, "the pause is shared")
        clock.advance(seconds: 15 * 60 + 1)
        #expect(a.pausedUntil() == nil && b.pausedUntil() == nil)
        #expect(try b.currentToken() == token, "then sends resume with the same token")
        // A rejection of a token older than the window: someone else minted; wait a full one.
        #expect(a.pauseAfterTooManyUpdates(token) == clock.secondsSince1970() + 20 * 60)
    }

    @Test func aStoreFailureIsASigningErrorNamingTheStore() throws {
        let manager = manager(BrokenTokenStore(), ManualClock(wallSeconds: 1_700_000_000))
        #expect(throws: SigningKeyError.self) { try manager.currentToken() }
        do { _ = try manager.currentToken() } catch {
            #expect(error.code == .tokenStoreFailed)
            #expect(error.message.contains("disk I/O error"))
        }
    }

    /// Against the fake with Apple's rule: a second process that minted its own token is
    /// refused once, pauses, and sends nothing more while paused.
    @Test func aRefusedUpdatePausesTheClientWithoutFurtherRequests() async throws {
        let fake = try FakeAPNs(tokenUpdateWindow: 1200)
        defer { fake.stop() }
        let (first, _, firstTransport) = try makeClient(fake)
        defer { firstTransport.shutdown() }
        guard case .delivered = await first.send(TestRequests.alert(1)) else {
            Issue.record("the first token should be accepted")
            return
        }
        // A process that does not share the store mints its own token: Apple refuses it.
        let (second, secondTokens, secondTransport) = try makeClient(fake)
        defer { secondTransport.shutdown() }
        let refused = await second.send(TestRequests.alert(2))
        guard case .transportFailed(let failure) = refused, failure.code == .keyStopped else {
            Issue.record("the refused send is held with the key: \(refused)")
            return
        }
        #expect(failure.message.contains("429 TooManyProviderTokenUpdates") && failure.message.contains(FakeAPNs.keyId))
        let until = try #require(secondTokens.pausedUntil())
        #expect(until > Int64(Date().timeIntervalSince1970) + 19 * 60)
        #expect(secondTokens.hold()?.kind == .paused && secondTokens.hold()?.until == until)
        let answered = fake.answeredCount()
        #expect(await second.send(TestRequests.alert(3)) == refused, "paused: answered at once")
        #expect(fake.answeredCount() == answered, "no request reached APNs while paused")
        #expect(fake.log().filter { $0.string("reason") == "TooManyProviderTokenUpdates" }.count == 1)
    }
}
