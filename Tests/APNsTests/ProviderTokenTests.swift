import APNs
import Foundation
import TestSupport
import StrictJSON
import Testing
import TestSupport
import Crypto

@Suite struct ProviderTokenTests {
    @Test func base64URLHasNoPaddingAndRoundTrips() {
        #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
        #expect(Base64URL.encode(Array("fo".utf8)) == "Zm8")
        #expect(Base64URL.encode(Array("foo".utf8)) == "Zm9v")
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) & 0xFF) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab=c") == nil)
    }

    @Test func derSignatureBecomesPaddedRawHalves() throws {
        // r = 0x01 (one byte), s = 0x80 00 … (needs a DER 0x00 sign byte): both padded to 32.
        let s = [UInt8(0x80)] + [UInt8](repeating: 0, count: 31)
        let der: [UInt8] = [0x30, UInt8(3 + 2 + 33), 0x02, 0x01, 0x01, 0x02, 33, 0x00] + s
        let raw = try ECDSASignature.rawFromDER(der)
        #expect(raw.count == 64)
        #expect(raw[0..<31].allSatisfy { $0 == 0 } && raw[31] == 1)
        #expect(Array(raw[32...]) == s)
    }

    @Test func malformedDERIsRejected() {
        let cases: [[UInt8]] = [
            [], [0x31, 0x00], [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01], // truncated
            [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01],             // negative r
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00],       // trailing byte
            [0x30, 0x25, 0x02, 0x21] + [UInt8](repeating: 0x7F, count: 33) + [0x02, 0x01, 0x01], // r too long
        ]
        for der in cases {
            #expect(throws: ECDSASignature.FormatError.self) { try ECDSASignature.rawFromDER(der) }
        }
    }

    @Test func tokenHasAppleShapeAndEscapesIdentifiers() throws {
        let key = try SigningKey.ephemeral()
        let token = try ProviderToken.sign(teamId: "TEAM\"12345", keyId: "KEY1234567", issuedAt: 1_700_000_000, key: key)
        let parts = token.compact.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        #expect(String(decoding: Base64URL.decode(parts[0]) ?? [], as: UTF8.self) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(String(decoding: Base64URL.decode(parts[1]) ?? [], as: UTF8.self) == #"{"iss":"TEAM\"12345","iat":1700000000}"#)
        #expect(Base64URL.decode(parts[2])?.count == 64)
        #expect(!token.compact.contains("="))
        #expect(!"\(token)".contains(parts[2]), "description is redacted")
        #expect(token.bearerValue == "bearer " + token.compact)
    }

    /// Signatures whose r or s starts with a zero byte are where DER→raw conversions break;
    /// sign until both cases occur and let PyJWT + cryptography verify every one.
    @Test func signaturesWithLeadingZeroBytesVerifyInPython() throws {
        let key = try SigningKey.ephemeral()
        var tokens: [String] = []
        var sawZeroR = false, sawZeroS = false
        var iat: Int64 = 1_700_000_000
        while !(sawZeroR && sawZeroS), iat < 1_700_020_000 {
            let token = try ProviderToken.sign(teamId: "TEAM123456", keyId: "KEY1234567", issuedAt: iat, key: key)
            let signature = Base64URL.decode(String(token.compact.split(separator: ".")[2])) ?? []
            if signature.first == 0, !sawZeroR { sawZeroR = true; tokens.append(token.compact) }
            if signature.count == 64, signature[32] == 0, !sawZeroS { sawZeroS = true; tokens.append(token.compact) }
            iat += 1
        }
        #expect(sawZeroR && sawZeroS)
        tokens.append(try ProviderToken.sign(teamId: "TEAM123456", keyId: "KEY1234567", issuedAt: iat, key: key).compact)
        let verified = try PythonJWT.verify(tokens: tokens, publicKeyDER: key.publicKeyDER())
        #expect(verified == tokens.count)
    }

    @Test func managerMintsLazilyAndRespectsTheTwentyMinuteFloor() throws {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let manager = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: clock)
        #expect(manager.mintedCount == 0, "nothing signed before first use")
        let first = try manager.currentToken()
        #expect(first.issuedAt == 1_700_000_000)
        clock.advance(seconds: 49 * 60)
        #expect(try manager.currentToken() == first)
        // APNs says expired at 19 minutes of age: no new token, whatever APNs says.
        let early = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: ManualClock(wallSeconds: 0))
        let earlyToken = try early.currentToken()
        #expect(try early.refresh(after: earlyToken) == nil)
        #expect(early.mintedCount == 1)
        clock.advance(seconds: 60)
        let second = try manager.currentToken()
        #expect(second != first && second.issuedAt == 1_700_000_000 + 50 * 60)
        #expect(manager.mintedCount == 2)
    }

    @Test func concurrentRefreshesMintOnce() async throws {
        let clock = ManualClock(wallSeconds: 1_700_000_000)
        let manager = ProviderTokenManager(key: try SigningKey.ephemeral(), teamId: "TEAM123456", keyId: "KEY1234567", clock: clock)
        let rejected = try manager.currentToken()
        clock.advance(seconds: 21 * 60)
        let fresh = await withTaskGroup(of: ProviderToken?.self) { group in
            for _ in 0..<64 { group.addTask { try? manager.refresh(after: rejected) } }
            var all: [ProviderToken?] = []
            for await token in group { all.append(token) }
            return all
        }
        #expect(manager.mintedCount == 2)
        #expect(Set(fresh.compactMap { $0?.compact }).count == 1)
        #expect(fresh.allSatisfy { $0 != nil && $0 != rejected })
    }
}

/// Verifies ES256 JWTs with PyJWT and cryptography (Debian's python3-jwt, python3-cryptography).
enum PythonJWT {
    static func verify(tokens: [String], publicKeyDER: [UInt8]) throws -> Int {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let keyFile = dir.appendingPathComponent("public.der")
        try Data(publicKeyDER).write(to: keyFile)
        let script = """
        import sys, jwt
        from cryptography.hazmat.primitives.serialization import load_der_public_key
        key = load_der_public_key(open(sys.argv[1], 'rb').read())
        ok = 0
        for line in sys.stdin.read().split():
            jwt.decode(line, key, algorithms=['ES256'], options={'verify_iat': False})
            ok += 1
        print(ok)
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, keyFile.path]
        let input = Pipe.closedOnExec(), output = Pipe.closedOnExec()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(tokens.joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
