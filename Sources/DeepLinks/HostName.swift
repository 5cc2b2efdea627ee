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
        if let last = labels.last, last.utf8.allSatisfy(ASCII.isDigit) {
            return "host looks like an IP address; list DNS names only"
        }
        return nil
    }
}
