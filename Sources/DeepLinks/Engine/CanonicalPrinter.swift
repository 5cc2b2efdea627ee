extension CompiledRouteTable {
    /// The printing half of `check(_:)`, for code that holds a route's values rather than a
    /// link (the generated Swift router): `https://`, the canonical host, each decoded path
    /// segment and each query item (`key`, decoded value; in the route's canonical order)
    /// percent-encoded exactly as the canonicaliser writes them. For values the route's
    /// types accept, `check` of the result accepts it with the same values.
    func canonicalString(segments: [String], query: [NamedValue]) -> String {
        let host = hostBytes[0]
        var capacity = 9 + host.count
        for s in segments { capacity += 1 + 3 * s.utf8.count }
        for item in query { capacity += 2 + item.name.utf8.count + 3 * item.value.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var out = CanonicalWriter(buffer)
            out.append("https://")
            out.append(host)
            PercentCoding.pathSafe.withUnsafeBufferPointer { safe in
                for var segment in segments {
                    out.append(UInt8(ascii: "/"))
                    segment.withUTF8 { PercentCoding.encode($0, safe: safe, into: &out) }
                }
            }
            if segments.isEmpty { out.append(UInt8(ascii: "/")) }
            PercentCoding.querySafe.withUnsafeBufferPointer { safe in
                for (i, item) in query.enumerated() {
                    out.append(i == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&"))
                    var key = item.name, value = item.value
                    key.withUTF8 { out.append($0) }
                    out.append(UInt8(ascii: "="))
                    value.withUTF8 { PercentCoding.encode($0, safe: safe, into: &out) }
                }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<min(out.count, buffer.count)]), as: UTF8.self)
        }
    }
}
