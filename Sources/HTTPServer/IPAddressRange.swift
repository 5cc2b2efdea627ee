#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as 16 bytes. IPv4 is kept in its IPv4-mapped IPv6 form
/// (`::ffff:192.0.2.1`), so a peer that reaches a dual-stack socket as
/// `::ffff:192.0.2.1` and the same address written `192.0.2.1` are one address.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// `192.0.2.1` or `2001:db8::1` (no brackets, no zone, no port); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let text = String(text)
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(v4: withUnsafeBytes(of: v4.s_addr) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        self.init(masked: withUnsafeBytes(of: v6) { Array($0) })
    }

    private init(v4: [UInt8]) {
        self.init(masked: [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + v4)
    }

    /// 16 bytes as they are.
    fileprivate init(masked bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var isIPv4: Bool {
        bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
    }

    /// The address the way `inet_ntop` writes it: `192.0.2.1`, `2001:db8::1`.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if isIPv4 {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12..<16]) }
            _ = inet_ntop(AF_INET, &v4, &text, socklen_t(text.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            _ = inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// An address or a CIDR range (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`), as
/// `server.trustedProxies` lists them. An IPv4 range also matches the IPv4-mapped IPv6
/// form of its addresses.
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    public let base: IPAddress
    /// Leading bits that must match, counted in the 128-bit form.
    public let prefixBits: Int

    /// The range as written, or why it is not one (for the configuration's message).
    public static func parse(_ text: String) -> Result<IPAddressRange, RangeError> {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else {
            return .failure(RangeError("\(parts[0].isEmpty ? "an empty address" : "\"\(parts[0])\" is not an IPv4 or IPv6 address")"))
        }
        // The prefix counts bits of the form written: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
        let writtenAsIPv4 = !parts[0].contains(":")
        let width = writtenAsIPv4 ? 32 : 128
        var bits = width
        if parts.count == 2 {
            guard let given = Int(parts[1]), parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber),
                  parts[1].count <= 3, (0...width).contains(given) else {
                return .failure(RangeError("the prefix length after \"/\" must be a whole number from 0 to \(width) for an \(writtenAsIPv4 ? "IPv4" : "IPv6") address"))
            }
            bits = given
        }
        let prefixBits = writtenAsIPv4 ? 96 + bits : bits
        let range = IPAddressRange(base: address, prefixBits: prefixBits)
        // 10.1.0.0/8 is almost always a typo for 10.0.0.0/8 or 10.1.0.0/16: say so.
        guard range.masked(address) == address else {
            return .failure(RangeError("\(parts[0])/\(bits) has bits set past the prefix; the range starts at \(range.masked(address))/\(bits)"))
        }
        return .success(range)
    }

    public struct RangeError: Error, Sendable, Equatable {
        public let message: String
        init(_ message: String) { self.message = message }
    }

    private init(base: IPAddress, prefixBits: Int) {
        self.base = base
        self.prefixBits = prefixBits
    }

    public func contains(_ address: IPAddress) -> Bool { masked(address) == base }

    private func masked(_ address: IPAddress) -> IPAddress {
        var bytes = address.bytes
        for i in 0..<16 {
            let keep = max(0, min(8, prefixBits - i * 8))
            bytes[i] &= keep == 8 ? 0xFF : UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
        return IPAddress(masked: bytes)
    }

    public var description: String {
        let width = base.isIPv4 ? prefixBits - 96 : prefixBits
        return width == (base.isIPv4 ? 32 : 128) ? base.description : "\(base)/\(width)"
    }
}
