import Testing
@testable import DeepLinks
import StrictJSON

@Suite struct ForbiddenCharactersTests {
    /// The ranges `ForbiddenCharacters` answers without the lists agree with them, over
    /// every scalar: raw ASCII space, controls and DEL, and above ASCII TextSafety's unsafe
    /// characters and Unicode whitespace.
    @Test func shortcutsAgreeWithTheLists() {
        var disagreeing: [String] = []
        for v in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(v) else { continue }
            let listed = v < 0x80 ? v <= 0x20 || v == 0x7F : TextSafety.isUnsafe(scalar) || TextSafety.isWhitespace(scalar)
            if ForbiddenCharacters.contains(scalar) != listed { disagreeing.append("U+" + String(v, radix: 16, uppercase: true)) }
        }
        #expect(disagreeing.isEmpty, "\(disagreeing.prefix(20))")
    }
}
