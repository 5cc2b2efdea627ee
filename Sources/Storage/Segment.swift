import StrictJSON
import Synchronization

/// A campaign's devices are stored in segments: one immutable row per up to
/// `devicesPerSegment` devices (tokens packed, per-device bodies only when a device has its
/// own), and apart from it one small mutable row (lease, fencing number, progress, one
/// outcome code per device). A device needs a row of its own only when its result is not
/// a plain success: see `SegmentCode`.
public enum SegmentLayout {
    /// Devices per segment. Big enough that a segment's rows cost a few bytes per device,
    /// small enough that rewriting its codes at a checkpoint stays cheap.
    public static let devicesPerSegment = 1024
}

/// One device's outcome in its segment's `codes` (one byte each). Raw values are stored;
/// never renumber.
public enum SegmentCode: UInt8, Sendable {
    /// No result yet: not handed out, or in flight under the segment's current lease.
    case open = 0
    /// Answered 200 with the apns-id derived from the campaign's prefix and the index.
    case delivered = 1
    /// A dry-run campaign's device, its apns-id derived.
    case dryRun = 2
    /// Not sent: the campaign was cancelled first (no details).
    case cancelled = 3
    /// Not sent: the campaign's `expires_at` came first (no details).
    case expired = 4
    /// The device has a row in `deliveries`, which holds its state and details.
    case row = 255

    /// The state a code stands for; nil for `open` and `row` (the segment's lease or the
    /// row says).
    public var state: DeliveryState? {
        switch self {
        case .delivered: .delivered
        case .dryRun: .dryRun
        case .cancelled: .cancelled
        case .expired: .expired
        case .open, .row: nil
        }
    }
}

extension SegmentCode {
    /// The code an update is kept as when it is a plain success its segment's code says in
    /// full — delivered (200, the derived apns-id, no `apns-unique-id`) or dry-run with the
    /// derived id; nil: the device needs a row of its own. One rule for both backends.
    public static func plain(for update: DeliveryUpdate, apnsIDPrefix prefix: String) -> SegmentCode? {
        guard !update.refundAttempt, update.reason == nil, update.timestampMilliseconds == nil, update.apnsUniqueID == nil,
              let answered = update.apnsID, isDerived(answered, prefix: prefix, index: update.index) else { return nil }
        switch update.state {
        case .delivered where update.status == 200: return .delivered
        case .dryRun where update.status == nil: return .dryRun
        default: return nil
        }
    }

    /// Whether `answered` is `CampaignMessage.apnsID(prefix:index:)`, letters compared
    /// without case, read in place (no apns-id built per result).
    static func isDerived(_ answered: String, prefix: String, index: Int) -> Bool {
        let digits = 12
        let value = UInt64(truncatingIfNeeded: index) & 0xFFFF_FFFF_FFFF
        // Bytes read through a buffer, not a view's indexes (some 80 instructions a byte);
        // Swift's strings on Linux are native, so always contiguous.
        return answered.utf8.withContiguousStorageIfAvailable { got in
            prefix.utf8.withContiguousStorageIfAvailable { head in
                guard got.count == head.count + digits else { return false }
                for i in 0..<head.count where !sameIgnoringCase(got[i], head[i]) { return false }
                for i in 0..<digits {
                    let nibble = UInt8(truncatingIfNeeded: value >> UInt64(4 * (digits - 1 - i)) & 0xF)
                    if !sameIgnoringCase(got[head.count + i], Hex.digit(nibble)) { return false }
                }
                return true
            } ?? false
        } ?? false
    }

    /// One ASCII byte against another, letters without case.
    @inline(__always)
    static func sameIgnoringCase(_ x: UInt8, _ y: UInt8) -> Bool {
        x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)
    }

    /// ASCII letters compared without case: a UUID's hex digits mean the same in either.
    static func sameIgnoringCase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)
        }
    }
}

/// One device as a segment stores it.
public struct SegmentDevice: Sendable, Equatable {
    public var token: String
    /// nil: the campaign's shared body.
    public var body: [UInt8]?

    public init(token: String, body: [UInt8]? = nil) {
        self.token = token
        self.body = body
    }
}

/// A segment's immutable row as stored.
public struct PackedSegment: Sendable, Equatable {
    /// `hexTokens`: every token is 64 lowercase hex digits, kept as 32 bytes each;
    /// `textTokens`: each token's UTF-8 after its length (a varint).
    public enum Format: Int, Sendable {
        case hexTokens = 1
        case textTokens = 2
    }

    public var format: Format
    public var count: Int
    public var tokens: [UInt8]
    /// nil: every device uses the campaign's body. Else per device a varint (length + 1;
    /// 0: the campaign's body) and the bytes.
    public var bodies: [UInt8]?
    /// FNV-1a (64 bits) over the campaign, segment, first index, format, count, tokens and
    /// bodies: a row copied to another place, truncated or changed does not decode.
    public var checksum: Int64

    public init(format: Format, count: Int, tokens: [UInt8], bodies: [UInt8]?, checksum: Int64) {
        self.format = format
        self.count = count
        self.tokens = tokens
        self.bodies = bodies
        self.checksum = checksum
    }
}

/// Why a stored segment cannot be read. Its campaign fails with this (it never sends a
/// guessed token); other campaigns go on.
public struct SegmentDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var campaign: Int64
    public var segment: Int64
    /// What is wrong: "checksum mismatch", "truncated tokens", …
    public var problem: String

    public init(campaign: Int64, segment: Int64, problem: String) {
        self.campaign = campaign
        self.segment = segment
        self.problem = problem
    }

    public var description: String { "segment \(segment) of campaign \(campaign) does not decode: \(problem)" }
}

/// Packs and unpacks segments. Pure functions: both backends store the same bytes.
public enum SegmentCodec {
    public static func pack(_ devices: some Collection<SegmentDevice>, campaign: Int64, segment: Int64,
                            firstIndex: Int) -> PackedSegment {
        let allHex = devices.allSatisfy { isPackableHex($0.token) }
        var tokens: [UInt8] = []
        if allHex {
            tokens.reserveCapacity(devices.count * 32)
            for device in devices { appendHex(device.token, to: &tokens) }
        } else {
            for device in devices {
                appendVarint(UInt64(device.token.utf8.count), to: &tokens)
                tokens.append(contentsOf: device.token.utf8)
            }
        }
        var bodies: [UInt8]?
        if devices.contains(where: { $0.body != nil }) {
            var packed: [UInt8] = []
            for device in devices {
                if let body = device.body {
                    appendVarint(UInt64(body.count) + 1, to: &packed)
                    packed.append(contentsOf: body)
                } else {
                    appendVarint(0, to: &packed)
                }
            }
            bodies = packed
        }
        let format: PackedSegment.Format = allHex ? .hexTokens : .textTokens
        return PackedSegment(format: format, count: devices.count, tokens: tokens, bodies: bodies,
                             checksum: checksum(campaign: campaign, segment: segment, firstIndex: firstIndex,
                                                format: format.rawValue, count: devices.count, tokens: tokens, bodies: bodies))
    }

    /// The devices of a stored segment, in index order; throws rather than guess.
    public static func unpack(campaign: Int64, segment: Int64, firstIndex: Int, format rawFormat: Int, count: Int,
                              tokens: [UInt8], bodies: [UInt8]?, checksum stored: Int64) throws(SegmentDecodeError) -> [SegmentDevice] {
        func fail(_ problem: String) -> SegmentDecodeError {
            SegmentDecodeError(campaign: campaign, segment: segment, problem: problem)
        }
        guard count >= 0, count <= 1 << 24 else { throw fail("device count \(count) out of range") }
        guard checksum(campaign: campaign, segment: segment, firstIndex: firstIndex, format: rawFormat, count: count,
                       tokens: tokens, bodies: bodies) == stored else { throw fail("checksum mismatch") }
        guard let format = PackedSegment.Format(rawValue: rawFormat) else { throw fail("unknown format \(rawFormat)") }
        var devices: [SegmentDevice] = []
        devices.reserveCapacity(count)
        switch format {
        case .hexTokens:
            guard tokens.count == count * 32 else { throw fail("\(tokens.count) token bytes for \(count) devices of 32") }
            for i in 0..<count { devices.append(SegmentDevice(token: Hex.encode(tokens[(i * 32)..<(i * 32 + 32)]))) }
        case .textTokens:
            var at = 0
            for _ in 0..<count {
                guard let length = readVarint(tokens, at: &at), length <= UInt64(tokens.count - at) else { throw fail("truncated tokens") }
                let end = at + Int(length)
                guard let token = String(validating: tokens[at..<end], as: UTF8.self) else { throw fail("a token is not UTF-8") }
                devices.append(SegmentDevice(token: token))
                at = end
            }
            guard at == tokens.count else { throw fail("\(tokens.count - at) bytes after the last token") }
        }
        if let bodies {
            var at = 0
            for i in 0..<count {
                guard let prefix = readVarint(bodies, at: &at) else { throw fail("truncated bodies") }
                guard prefix > 0 else { continue }
                guard prefix - 1 <= UInt64(bodies.count - at) else { throw fail("truncated bodies") }
                let end = at + Int(prefix - 1)
                devices[i].body = Array(bodies[at..<end])
                at = end
            }
            guard at == bodies.count else { throw fail("\(bodies.count - at) bytes after the last body") }
        }
        return devices
    }

    /// 64 lowercase hex digits: what Apple's device tokens are once normalised. Anything
    /// else (other lengths, capitals, a channel id) is kept as text, byte for byte.
    static func isPackableHex(_ token: String) -> Bool {
        // Read in place (a native string always can be).
        token.utf8.withContiguousStorageIfAvailable { bytes in bytes.count == 64 && Hex.isLowercaseDigits(bytes) } ?? false
    }

    /// Only called for tokens `isPackableHex` accepted (so read in place).
    private static func appendHex(_ token: String, to out: inout [UInt8]) {
        _ = token.utf8.withContiguousStorageIfAvailable { hex in
            let start = out.count, count = hex.count / 2
            out.append(contentsOf: repeatElement(0, count: count))
            out.withUnsafeMutableBufferPointer { bytes in
                for i in 0..<count { bytes[start + i] = nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]) }
            }
        }
    }

    private static func nibble(_ byte: UInt8) -> UInt8 { byte <= 0x39 ? byte - 0x30 : byte - 0x61 + 10 }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func readVarint(_ bytes: [UInt8], at: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < bytes.count, shift < 64 {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    static func checksum(campaign: Int64, segment: Int64, firstIndex: Int, format: Int, count: Int,
                         tokens: [UInt8], bodies: [UInt8]?) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        for value in [UInt64(bitPattern: campaign), UInt64(bitPattern: segment), UInt64(firstIndex), UInt64(format), UInt64(count)] {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        for byte in tokens { mix(byte) }
        mix(bodies == nil ? 0 : 1)
        for byte in bodies ?? [] { mix(byte) }
        return Int64(bitPattern: hash)
    }
}

extension CampaignMessage {
    /// The same `apns-id` on every attempt for a device: the campaign's 24-character
    /// prefix and the device's index as 12 hex digits. A delivered device whose answer
    /// carried this id needs no row of its own.
    public static func apnsID(prefix: String, index: Int) -> String {
        Hex.padded(UInt64(truncatingIfNeeded: index) & 0xFFFF_FFFF_FFFF, width: 12, after: prefix)
    }
}

/// A segment's mutable row: who holds it, until when, under which fencing number, how far
/// its holder has handed devices out, and each device's code.
public struct SegmentProgress: Sendable, Equatable {
    public var codes: [UInt8]
    /// Devices handed out under the current lease: positions below are in flight unless coded.
    public var handed: Int
    /// The highest `handed` ever reached: positions below that are still `open` are counted
    /// in flight (a takeover hands them out again without counting them twice).
    public var reached: Int

    public init(codes: [UInt8], handed: Int, reached: Int) {
        self.codes = codes
        self.handed = handed
        self.reached = reached
    }

    /// Whether every device has a code other than `open`.
    public var isSettled: Bool { !codes.contains(SegmentCode.open.rawValue) }
}

/// A segment's immutable row as read back, for `DecodedSegments` to decode.
public struct StoredSegmentRow: Sendable {
    public var firstIndex: Int
    public var count: Int
    public var format: Int
    public var tokens: [UInt8]
    public var bodies: [UInt8]?
    public var checksum: Int64

    public init(firstIndex: Int, count: Int, format: Int, tokens: [UInt8], bodies: [UInt8]?, checksum: Int64) {
        self.firstIndex = firstIndex
        self.count = count
        self.format = format
        self.tokens = tokens
        self.bodies = bodies
        self.checksum = checksum
    }

    /// The row decoded: its devices, or why it does not decode.
    public func devices(campaign: Int64, seg: Int64) throws(SegmentDecodeError) -> [SegmentDevice] {
        try SegmentCodec.unpack(campaign: campaign, segment: seg, firstIndex: firstIndex, format: format, count: count,
                                tokens: tokens, bodies: bodies, checksum: checksum)
    }
}

/// The last few segments a storage decoded: a claim and the record of its results read the
/// same segment and decode it once, without reading it again. A segment changes only while
/// its campaign is filled in parts (its last one grows, by any instance), so the key holds
/// the device count its state row gives; campaign numbers are never reused.
public final class DecodedSegments: Sendable {
    private struct Key: Hashable {
        var campaign: Int64
        var seg: Int64
        var count: Int
    }

    private let entries = Mutex<[Key: [SegmentDevice]]>([:])
    private let capacity = 16

    public init() {}

    /// The devices of segment `seg` of `campaign` that has `count` devices; `load` reads its
    /// stored row (nil: missing) only when it is not here. A row that is missing or does
    /// not decode is a `SegmentDecodeError`, never a guessed token.
    public func devices(campaign: Int64, seg: Int64, count: Int,
                        load: () throws(StorageError) -> StoredSegmentRow?) throws(StorageError) -> Result<[SegmentDevice], SegmentDecodeError> {
        let key = Key(campaign: campaign, seg: seg, count: count)
        if let hit = entries.withLock({ $0[key] }) { return .success(hit) }
        guard let row = try load() else {
            return .failure(SegmentDecodeError(campaign: campaign, segment: seg, problem: "its row is missing"))
        }
        do throws(SegmentDecodeError) {
            let devices = try row.devices(campaign: campaign, seg: seg)
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[Key(campaign: campaign, seg: seg, count: devices.count)] = devices
            }
            return .success(devices)
        } catch {
            return .failure(error)
        }
    }
}
