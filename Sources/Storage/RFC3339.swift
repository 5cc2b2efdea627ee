#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 timestamps in UTC with milliseconds, as every time pushgate shows.
public enum RFC3339 {
    /// `2026-11-29T16:50:38.123Z`
    public static func format(_ seconds: Double) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let millis = Int((seconds - Double(Int(seconds))) * 1000)
        func pad(_ v: Int32, _ width: Int = 2) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(millis), 3))Z"
    }
}
