import Testing
@testable import Storage

@Suite struct SegmentCodecTests {
    static let hexToken = String(repeating: "0123456789abcdef", count: 4)

    @Test func hexTokensPackTo32BytesAndRoundTrip() throws {
        let devices = (0..<100).map { i in SegmentDevice(token: String(Self.hexToken.dropLast(2)) + String(format2: i)) }
        let packed = SegmentCodec.pack(devices, campaign: 7, segment: 3, firstIndex: 3072)
        #expect(packed.format == .hexTokens)
        #expect(packed.tokens.count == 100 * 32)
        #expect(packed.bodies == nil)
        let back = try SegmentCodec.unpack(campaign: 7, segment: 3, firstIndex: 3072, format: packed.format.rawValue, count: packed.count,
                                           tokens: packed.tokens, bodies: packed.bodies, checksum: packed.checksum)
        #expect(back == devices)
    }

    @Test func otherTokensAndBodiesRoundTripAsText() throws {
        let devices = [SegmentDevice(token: Self.hexToken.uppercased()), SegmentDevice(token: "channel/ZmFrZQ==", body: Array("{}".utf8)),
                       SegmentDevice(token: String(repeating: "ab", count: 80), body: []), SegmentDevice(token: "")]
        let packed = SegmentCodec.pack(devices, campaign: 1, segment: 0, firstIndex: 0)
        #expect(packed.format == .textTokens)
        let back = try SegmentCodec.unpack(campaign: 1, segment: 0, firstIndex: 0, format: 2, count: 4,
                                           tokens: packed.tokens, bodies: packed.bodies, checksum: packed.checksum)
        #expect(back == devices)
    }

    @Test func aChangedMovedOrTruncatedSegmentDoesNotDecode() {
        let packed = SegmentCodec.pack([SegmentDevice(token: Self.hexToken)], campaign: 1, segment: 0, firstIndex: 0)
        var flipped = packed.tokens
        flipped[5] ^= 1
        let cases: [(Int64, Int, [UInt8], Int64, String)] = [
            (1, 1, flipped, packed.checksum, "checksum mismatch"),
            (2, 1, packed.tokens, packed.checksum, "checksum mismatch"),      // another campaign's row
            (1, 2, packed.tokens, packed.checksum, "checksum mismatch"),      // another count
        ]
        for (campaign, count, tokens, sum, problem) in cases {
            #expect(throws: SegmentDecodeError(campaign: campaign, segment: 0, problem: problem)) {
                try SegmentCodec.unpack(campaign: campaign, segment: 0, firstIndex: 0, format: 1, count: count,
                                        tokens: tokens, bodies: nil, checksum: sum)
            }
        }
        // Consistent checksum over bytes that do not decode: still refused, with the reason.
        let short = Array(packed.tokens.dropLast())
        let sum = SegmentCodec.checksum(campaign: 1, segment: 0, firstIndex: 0, format: 1, count: 1, tokens: short, bodies: nil)
        #expect(throws: SegmentDecodeError(campaign: 1, segment: 0, problem: "31 token bytes for 1 devices of 32")) {
            try SegmentCodec.unpack(campaign: 1, segment: 0, firstIndex: 0, format: 1, count: 1, tokens: short, bodies: nil, checksum: sum)
        }
        let text: [UInt8] = [10, 65]
        let textSum = SegmentCodec.checksum(campaign: 1, segment: 0, firstIndex: 0, format: 2, count: 1, tokens: text, bodies: nil)
        #expect(throws: SegmentDecodeError(campaign: 1, segment: 0, problem: "truncated tokens")) {
            try SegmentCodec.unpack(campaign: 1, segment: 0, firstIndex: 0, format: 2, count: 1, tokens: text, bodies: nil, checksum: textSum)
        }
    }

    /// A result is a code only when it says nothing a code cannot: 200 with the derived
    /// apns-id (in either case), no unique id, reason or timestamp.
    @Test func aPlainSuccessIsACodeAndAnythingElseARow() {
        let prefix = "01234567-89ab-4cde-8f01-"
        func update(_ index: Int, _ id: String?, state: DeliveryState = .delivered, status: Int? = 200) -> DeliveryUpdate {
            DeliveryUpdate(campaign: 1, index: index, state: state, status: status, apnsID: id, lease: 1)
        }
        #expect(SegmentCode.plain(for: update(42, prefix + "00000000002a"), apnsIDPrefix: prefix) == .delivered)
        #expect(SegmentCode.plain(for: update(42, prefix.uppercased() + "00000000002A"), apnsIDPrefix: prefix) == .delivered)
        #expect(SegmentCode.plain(for: update(42, CampaignMessage.apnsID(prefix: prefix, index: 42), state: .dryRun, status: nil),
                                  apnsIDPrefix: prefix) == .dryRun)
        #expect(SegmentCode.plain(for: update(43, prefix + "00000000002a"), apnsIDPrefix: prefix) == nil, "another device's id")
        #expect(SegmentCode.plain(for: update(42, "11234567-89ab-4cde-8f01-00000000002a"), apnsIDPrefix: prefix) == nil)
        #expect(SegmentCode.plain(for: update(42, prefix + "00000000002a0"), apnsIDPrefix: prefix) == nil)
        #expect(SegmentCode.plain(for: update(42, prefix + "0000000002a"), apnsIDPrefix: prefix) == nil)
        #expect(SegmentCode.plain(for: update(42, prefix + "00000000002g"), apnsIDPrefix: prefix) == nil)
        #expect(SegmentCode.plain(for: update(42, nil), apnsIDPrefix: prefix) == nil)
        #expect(SegmentCode.plain(for: update(42, prefix + "00000000002a", status: 202), apnsIDPrefix: prefix) == nil)
        var unique = update(42, prefix + "00000000002a")
        unique.apnsUniqueID = "u"
        #expect(SegmentCode.plain(for: unique, apnsIDPrefix: prefix) == nil)
        // The index past 48 bits: its low 48 bits, as the derived id has them.
        #expect(SegmentCode.plain(for: update(1 << 48 | 7, prefix + "000000000007"), apnsIDPrefix: prefix) == .delivered)
    }

    @Test func varintsRoundTrip() {
        for value: UInt64 in [0, 1, 127, 128, 300, 1 << 32, UInt64.max] {
            var bytes: [UInt8] = []
            SegmentCodec.appendVarint(value, to: &bytes)
            var at = 0
            #expect(SegmentCodec.readVarint(bytes, at: &at) == value)
            #expect(at == bytes.count)
        }
    }
}

private extension String {
    init(format2 value: Int) {
        let digits = Array("0123456789abcdef")
        self = String([digits[(value >> 4) & 15], digits[value & 15]])
    }
}
