internal import COpenSSL
import Crypto
import Testing

@Suite struct CryptoTests {
    @Test func sha256MatchesFIPS180Vectors() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func hmacSHA256MatchesRFC4231() {
        // RFC 4231 test case 1: a 20-byte 0x0b key.
        #expect(HMACSHA256.hex(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func constantTimeEqualityComparesEveryByteAndTheLength() {
        let digest = Array(SHA256.hex(Array("key".utf8)).utf8)
        #expect(ConstantTime.equal(digest, digest))
        var last = digest
        last[last.count - 1] ^= 1
        #expect(!ConstantTime.equal(digest, last))
        var first = digest
        first[0] ^= 0x80
        #expect(!ConstantTime.equal(digest, first))
        #expect(!ConstantTime.equal(digest, Array(digest.dropLast())))
        #expect(ConstantTime.equal([], []))
        #expect(!ConstantTime.equal([], [0]))
    }

    /// A PKCS#8 block OpenSSL cannot decode: the error says why in OpenSSL's words, and
    /// leaves nothing in the thread's error queue (libcurl reads that queue after a failed
    /// handshake on the same threads).
    @Test func anUndecodableKeyKeepsOpenSSLsReasonAndEmptiesTheQueue() {
        let pem = Array("-----BEGIN PRIVATE KEY-----\nMAMCAQA=\n-----END PRIVATE KEY-----\n".utf8)
        do {
            _ = try SigningKey.load(pem: pem, origin: "broken.p8")
            Issue.record("an undecodable key loaded")
        } catch {
            #expect(error.code == .keyInvalid)
            // e.g. (OpenSSL: error:06800079:asn1 encoding routines::field missing; error:0488000D:PEM routines::ASN1 lib)
            #expect(error.message.hasPrefix(#"key file "broken.p8" holds a PKCS#8 block OpenSSL cannot decode (OpenSSL: error:"#),
                    "\(error.message)")
            #expect(error.message.contains("routines::"), "\(error.message)")
        }
        #expect(ERR_peek_error() == 0)
    }

    @Test func aKeySignsES256AsRawRAndS() throws {
        let key = try SigningKey.ephemeral()
        let signature = try key.signES256(Array("header.claims".utf8))
        #expect(signature.count == 64)
        #expect(key.publicKeyFingerprint.count == 64)
        #expect(ERR_peek_error() == 0)
    }

    @Test func textWithoutCertificatesCountsNoneAndSaysWhy() {
        let none = PEMCertificates.decode(Array("not a certificate\n".utf8))
        #expect(none.count == 0)
        #expect(none.because.hasPrefix(" (OpenSSL: error:") && none.because.contains("PEM routines"), "\(none.because)")
        let broken = PEMCertificates.decode(Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8))
        #expect(broken.count == 0)
        #expect(broken.because.hasPrefix(" (OpenSSL: error:"), "\(broken.because)")
        #expect(ERR_peek_error() == 0)
    }

    @Test func openSSLNamesItsVersion() {
        #expect(OpenSSLLibrary.version.hasPrefix("OpenSSL "))
    }
}
