import APNs
import Foundation
import StrictJSON
import Testing
import Crypto
import Timing

@Suite struct SigningKeyTests {
    static func fixture(_ name: String) -> String { FakeAPNs.fixtures.appendingPathComponent(name).path }

    @Test func loadsApplesP8() throws {
        let key = try SigningKey.load(file: Self.fixture("test-key.p8"))
        #expect(try key.signES256(Array("x".utf8)).count == 64)
        #expect(!key.isEphemeral)
    }

    @Test(arguments: [
        ("test-key-encrypted.p8", SigningKeyError.Code.keyEncrypted),
        ("test-key-sec1.pem", .keyNotPKCS8),
        ("test-key-p384.p8", .keyNotP256),
        ("test-key-rsa.p8", .keyNotP256),
        ("test-key-garbage.p8", .keyInvalid),
        ("fake_apns.py", .keyNotPKCS8),
        ("does-not-exist.p8", .keyFileUnreadable),
    ])
    func badKeysFailClearlyNamingTheFile(name: String, code: SigningKeyError.Code) throws {
        let path = Self.fixture(name)
        do {
            _ = try SigningKey.load(file: path)
            Issue.record("\(name) loaded")
        } catch {
            #expect(error.code == code)
            #expect(error.message.contains(path), "names the file")
            // No key material in the message: nothing from the file's base64 body.
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }
                for line in body where line.count > 8 { #expect(!error.message.contains(line)) }
            }
        }
    }

    @Test func configurationSurfacesKeyErrorsAtStartUp() {
        var config = APNsConfiguration(teamId: "TEAM123456", keyId: "KEY1234567", keyFile: Self.fixture("test-key-encrypted.p8"))
        config.dryRun = true
        #expect(throws: APNsConfigurationError.self) { try APNsDelivery.providerTokens(for: config, clock: SystemClock()) }
        do { _ = try APNsDelivery.providerTokens(for: config, clock: SystemClock()) } catch {
            #expect(error.code == .keyEncrypted)
            #expect(error.setting == JSONPath.root.appending("apns").appending("keyFile"))
        }
    }
}
