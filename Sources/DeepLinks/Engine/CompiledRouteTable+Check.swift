extension CompiledRouteTable {
    /// Checks a link: either its one canonical form and what the app's router will see, or
    /// exactly one stable reason it is refused. The checks run in the order documented in
    /// docs/deeplinks.md. Never traps, whatever the input.
    func check(_ link: String) -> LinkCheckResult {
        var copy = link
        return copy.withUTF8 { check(utf8: $0) }
    }

    /// The same check over raw bytes (a line of a file): bytes that are not UTF-8 are
    /// refused first (`malformed`, with the offset of the first bad byte), as they are no
    /// text at all; everything else is checked exactly as `check(_:)` checks the string.
    func check(utf8 bytes: UnsafeBufferPointer<UInt8>) -> LinkCheckResult {
        scan(bytes, accepted: { .accepted($0.link) }, rejected: { .rejected($0) })
    }

    /// The scan itself, over bytes: `accepted` sees the result in stack memory (so it can
    /// be written out without building strings), `rejected` the one reason. Bytes that are
    /// not UTF-8 are refused as `check(utf8:)` documents.
    func scan<R>(_ bytes: UnsafeBufferPointer<UInt8>, accepted: (AcceptedLinkView) -> R,
                 rejected: (LinkRejection) -> R) -> R {
        var rejection: LinkRejection
        var validated = false  // the prescan passed every byte
        if bytes.count > LinkLimits.maxBytes {
            rejection = .tooLong(byteCount: bytes.count)
        } else {
            // Decoded text is never longer than the input, so stack buffers of that size
            // hold everything; nothing is allocated unless the caller asks for strings.
            let outcome: Result<R, LinkRejection> = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { decoded in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: LinkScanner.segmentSlots) { segmentEnds in
                    withUnsafeTemporaryAllocation(of: UInt16.self, capacity: LinkScanner.itemSlots) { itemBounds in
                        var scanner = LinkScanner(table: self, input: bytes, decoded: decoded,
                                                  segmentEnds: segmentEnds, itemBounds: itemBounds)
                        do throws(LinkRejection) {
                            return .success(try scanner.run(accepted))
                        } catch {
                            validated = scanner.prescanned
                            return .failure(error)
                        }
                    }
                }
            }
            switch outcome {
            case .success(let result): return result
            case .failure(let error): rejection = error
            }
        }
        // The prescan validates UTF-8 as it goes, so an accepted link is valid; a refusal
        // with one of the codes the prescan (or the length check) gives may have stopped
        // before a bad byte, so only then, and only if the prescan did not finish, is the
        // whole input validated.
        let scanMayHaveStopped = !validated && (rejection.code == .forbiddenCharacter || rejection.code == .malformed
            || rejection.code == .tooLong)
        if scanMayHaveStopped, let bad = UTF8Scalar.firstInvalidOffset(bytes) {
            rejection = LinkRejection(code: .malformed, "the link is not valid UTF-8 at byte offset \(bad)")
        }
        return rejected(rejection)
    }
}

extension LinkRejection {
    /// A link of `byteCount` UTF-8 bytes, over `LinkLimits.maxBytes`.
    public static func tooLong(byteCount: Int) -> LinkRejection {
        LinkRejection(code: .tooLong, "link is \(byteCount) bytes; the limit is \(LinkLimits.maxBytes)")
    }
}
