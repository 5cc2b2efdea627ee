@testable import APNs
import Testing
@testable import CurlClient

/// `HeaderText` keeps what `String(decoding:as: UTF8.self)` of the same bytes would be,
/// inline up to 40 bytes and as a String beyond.
@Suite struct HeaderTextTests {
    static let samples: [[UInt8]] = [
        [], Array("8F0C2A4E-3B1D-4C5E-9F6A-7B8C9D0E1F2A".utf8), Array(String(repeating: "x", count: 40).utf8),
        Array(String(repeating: "y", count: 41).utf8), Array(String(repeating: "z", count: 300).utf8),
        [0x61, 0xFF, 0x62, 0xC3], Array("ünïcödé-id".utf8),
    ]

    @Test(arguments: samples)
    func readsAsTheBytesDecoded(_ bytes: [UInt8]) {
        let text = bytes.withUnsafeBytes { HeaderText($0) }
        let expected = String(decoding: bytes, as: UTF8.self)
        #expect(text.string == expected)
        #expect(HeaderText(expected) == HeaderText(expected))
        #expect(HeaderText(expected).string == expected)
    }

    @Test func equalOnlyForTheSameText() {
        #expect(HeaderText("abc") != HeaderText("abd"))
        #expect(HeaderText("abc") != HeaderText("abc "))
        #expect(HeaderText(String(repeating: "a", count: 50)) != HeaderText(String(repeating: "a", count: 51)))
        var response = TransportResponse(status: 200, apnsId: "8F0C2A4E-3B1D-4C5E-9F6A-7B8C9D0E1F2A")
        #expect(response.apnsId == "8F0C2A4E-3B1D-4C5E-9F6A-7B8C9D0E1F2A")
        response.apnsId = nil
        #expect(response.apnsId == nil && response == TransportResponse(status: 200))
    }
}
