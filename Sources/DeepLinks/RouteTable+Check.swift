extension RouteTable {
    /// Checks a link against the table: either its one canonical form and what the app's
    /// router will see, or exactly one stable reason it is refused. The checks run in the
    /// order documented in docs/deeplinks.md. Never traps, whatever the input.
    public func check(_ link: String) -> LinkCheckResult {
        compiled.check(link)
    }

    /// The same check over raw bytes (a line of a file): bytes that are not UTF-8 are
    /// refused first (`malformed`, with the offset of the first bad byte), as they are no
    /// text at all; everything else is checked exactly as `check(_:)` checks the string.
    public func check(utf8 bytes: UnsafeBufferPointer<UInt8>) -> LinkCheckResult {
        compiled.check(utf8: bytes)
    }

    /// The scan itself (in the engine, `CompiledRouteTable.scan`): `accepted` sees the
    /// result in stack memory, `rejected` the one reason.
    func scan<R>(_ bytes: UnsafeBufferPointer<UInt8>, accepted: (AcceptedLinkView) -> R,
                 rejected: (LinkRejection) -> R) -> R {
        compiled.scan(bytes, accepted: accepted, rejected: rejected)
    }
}
