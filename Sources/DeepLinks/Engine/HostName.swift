/// Host-name rules for the table's `hosts` list.
enum HostName {
    static let maxLength = 253

    /// A lowercase ASCII DNS name: dot-separated labels of 1–63 `[a-z0-9-]`, not starting or
    /// ending with `-`, no trailing dot, and a last label that is not all digits (so no
    /// IPv4 literal can pass as a name).
    static func problem(with host: String) -> String? {
        if host.isEmpty { return "host is empty" }
        if host.utf8.count > maxLength { return "host is longer than \(maxLength) bytes" }
        if host.hasSuffix(".") { return "host must not end with a dot" }
        for c in host.utf8 {
            let ok = (c >= 0x61 && c <= 0x7A) || ASCII.isDigit(c) || c == 0x2D || c == 0x2E
            if !ok {
                return (c >= 0x41 && c <= 0x5A) ? "host must be lowercase"
                    : "host must be an ASCII DNS name (a-z, 0-9, -, .)"
            }
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            if label.isEmpty { return "host has an empty label" }
            if label.utf8.count > 63 { return "host has a label longer than 63 bytes" }
            if label.hasPrefix("-") || label.hasSuffix("-") { return "host label \(label) starts or ends with '-'" }
        }
        var copy = host
        if copy.withUTF8(endsInANumber) {
            return "host looks like an IP address (its last label is a number); list DNS names only"
        }
        return nil
    }

    /// WHATWG's "ends in a number": a last label of digits, or `0x` and hex digits, makes a
    /// URL parser read the whole host as IPv4. Such hosts are never names.
    static func endsInANumber(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = host.count
        if end > 0, host[end - 1] == UInt8(ascii: ".") { end -= 1 }  // "1.2.3.4." is IPv4 too
        var start = end
        while start > 0, host[start - 1] != UInt8(ascii: ".") { start -= 1 }
        let label = UnsafeBufferPointer(rebasing: host[start..<end])
        if label.isEmpty { return false }
        if label.allSatisfy(ASCII.isDigit) { return true }
        return label.count >= 2 && label[0] == UInt8(ascii: "0") && ASCII.lowercased(label[1]) == UInt8(ascii: "x")
            && label.dropFirst(2).allSatisfy(ASCII.isHexDigit)
    }
}
