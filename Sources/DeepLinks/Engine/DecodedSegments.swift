/// A path split into percent-decoded segments, as one byte buffer plus end offsets, so
/// the canonicaliser can build it in stack memory.
struct DecodedSegments {
    /// Every segment's decoded bytes, back to back.
    let bytes: UnsafeBufferPointer<UInt8>
    /// `ends[k]` is where segment `k` ends in `bytes`; it starts where `k - 1` ends.
    let ends: UnsafeBufferPointer<Int>
    let count: Int

    @inline(__always)
    func segment(_ k: Int) -> UnsafeBufferPointer<UInt8> {
        let start = k == 0 ? 0 : ends[k - 1]
        return UnsafeBufferPointer(rebasing: bytes[start..<ends[k]])
    }

    func string(_ k: Int) -> String { String(decoding: segment(k), as: UTF8.self) }

    /// Segments `k…` joined with `/` (a `*` route's value), built in one allocation.
    func rest(from k: Int) -> String {
        let start = k == 0 ? 0 : ends[k - 1]
        let length = ends[count - 1] - start + (count - 1 - k)
        return String(unsafeUninitializedCapacity: length) { out in
            var o = 0
            for i in k..<count {
                if i > k { out[o] = UInt8(ascii: "/"); o += 1 }
                for c in segment(i) { out[o] = c; o += 1 }
            }
            return o
        }
    }

    /// Calls `body` with the segments laid out from strings (for callers outside the
    /// canonicaliser, such as AASA validation).
    static func with<R>(_ segments: [String], _ body: (DecodedSegments) -> R) -> R {
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for s in segments {
            bytes.append(contentsOf: s.utf8)
            ends.append(bytes.count)
        }
        return bytes.withUnsafeBufferPointer { b in
            ends.withUnsafeBufferPointer { e in
                body(DecodedSegments(bytes: b, ends: e, count: segments.count))
            }
        }
    }
}
