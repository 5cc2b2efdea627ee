/// `apns-id` values: random (version 4) UUIDs in lowercase, as APNs echoes them back.
public enum APNsID {
    public static func random<R: RandomNumberGenerator>(using rng: inout R) -> String {
        let high = rng.next() as UInt64
        let low = rng.next() as UInt64
        return format(high: (high & ~0xF000) | 0x4000, low: (low & ~(UInt64(0xC) << 60)) | (UInt64(0x8) << 60))
    }

    public static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        return random(using: &rng)
    }

    static func format(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { out in
            var i = 0
            func put(_ v: UInt64) {
                for k in stride(from: 60, through: 0, by: -4) {
                    if i == 8 || i == 13 || i == 18 || i == 23 { out[i] = 0x2D; i += 1 }
                    let nibble = UInt8((v >> UInt64(k)) & 0xF)
                    out[i] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble
                    i += 1
                }
            }
            put(high)
            put(low)
            return 36
        }
    }
}

/// A fast generator for `apns-id`s (xoshiro256**, seeded from the system's secure
/// generator). The ids need to be unique, not secret; one generator per worker thread
/// avoids a system call per request.
public struct APNsIDRandom: RandomNumberGenerator, Sendable {
    private var s0, s1, s2, s3: UInt64

    public init() {
        var system = SystemRandomNumberGenerator()
        s0 = system.next(); s1 = system.next(); s2 = system.next(); s3 = system.next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }  // the one state xoshiro cannot leave
    }

    public mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
