/// Refuses a token listed twice in one intake without a copy of every token: each token
/// seen so far is kept as its hash and index (a few dozen bytes a device; a 3.9M-device
/// request would otherwise hold some 600 MB, or write a B-tree entry per device). A hash
/// seen before is confirmed against the earlier token, so a collision never refuses a
/// good campaign, and the colliding token is kept under the next free key, so its own
/// duplicate is still found. The hash is the process's seeded SipHash: a list cannot be
/// made to collide on purpose.
public struct DuplicateTokens {
    private var seen: [Int: Int] = [:]
    private let hash: (String) -> Int

    /// `hash`: the process's seeded SipHash; another only to make collisions in tests.
    public init(hash: @escaping (String) -> Int = { token in
        var hasher = Hasher()
        hasher.combine(token)
        return hasher.finalize()
    }) {
        self.hash = hash
    }

    /// Records `token` at `index`. `earlierToken` reads the token of an earlier index (only
    /// when the hashes match). Throws `duplicateToken` naming both indexes.
    public mutating func check(_ token: String, at index: Int,
                               earlierToken: (Int) throws(StorageError) -> String) throws(StorageError) {
        var key = hash(token)
        while let earlier = seen[key] {
            if try earlierToken(earlier) == token {
                throw StorageError(.duplicateToken, "token \(token) is listed twice: devices \(earlier) and \(index) (counting from 0)")
            }
            key &+= 1
        }
        seen[key] = index
    }
}
