@testable import Payloads

extension APNsID {
    /// `00000000-0000-4000-8000-00000000000n`-style ids, so previews compare with goldens.
    static func sequential(_ n: Int) -> String {
        format(high: 0x4000, low: (UInt64(0x8) << 60) | UInt64(truncatingIfNeeded: n) & 0x0000_FFFF_FFFF_FFFF)
    }
}
