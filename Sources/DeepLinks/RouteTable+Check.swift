extension RouteTable {
    /// Checks a link against the table: either its one canonical form and what the app's
    /// router will see, or exactly one stable reason it is refused. The checks run in the
    /// order documented in docs/deeplinks.md. Never traps, whatever the input.
    public func check(_ link: String) -> LinkCheckResult {
        let length = link.utf8.count
        if length > LinkLimits.maxBytes {
            return .rejected(LinkRejection(code: .tooLong,
                message: "link is \(length) bytes; the limit is \(LinkLimits.maxBytes)"))
        }
        var copy = link
        return copy.withUTF8 { input in
            // Decoded text is never longer than the input, so stack buffers of that size
            // hold everything; nothing is allocated unless the link is accepted.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(input.count, 1)) { decoded in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: LinkScanner.offsetSlots) { offsets in
                    var scanner = LinkScanner(table: compiled, input: input, decoded: decoded, offsets: offsets)
                    do throws(LinkRejection) {
                        return .accepted(try scanner.run())
                    } catch {
                        return .rejected(error)
                    }
                }
            }
        }
    }
}
