/// `apns-id` values: random (version 4) UUIDs in lowercase, as APNs echoes them back.
public enum APNsID {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public static func random<R: RandomNumberGenerator>(using rng: inout R) -> String {
        let high = rng.next() as UInt64
        let low = rng.next() as UInt64
        return format(high: (high & ~0xF000) | 0x4000, low: (low & ~(UInt64(0xC) << 60)) | (UInt64(0x8) << 60))
    }

    public static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        return random(using: &rng)
    }

    /// `00000000-0000-4000-8000-00000000000n`-style ids for stable previews and tests.
    public static func sequential(_ n: Int) -> String {
        format(high: 0x4000, low: (UInt64(0x8) << 60) | UInt64(truncatingIfNeeded: n) & 0x0000_FFFF_FFFF_FFFF)
    }

    static func format(high: UInt64, low: UInt64) -> String {
        var out = [UInt8](repeating: 0x2D, count: 36)
        var i = 0
        func put(_ v: UInt64, nibbles: Int) {
            for k in stride(from: nibbles - 1, through: 0, by: -1) {
                if i == 8 || i == 13 || i == 18 || i == 23 { i += 1 }
                out[i] = hex[Int((v >> UInt64(k * 4)) & 0xF)]
                i += 1
            }
        }
        put(high, nibbles: 16)
        put(low, nibbles: 16)
        return String(decoding: out, as: UTF8.self)
    }
}
