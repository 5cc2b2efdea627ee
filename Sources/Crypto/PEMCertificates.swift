internal import COpenSSL

/// X.509 certificates in PEM text, as OpenSSL decodes them.
public enum PEMCertificates {
    /// How many `BEGIN CERTIFICATE` blocks OpenSSL can decode, reading from the start
    /// until the first it cannot.
    public static func count(in pem: [UInt8]) -> Int { decode(pem).count }

    /// The count, and when it is 0, why in OpenSSL's words (`" (OpenSSL: …)"`, "" if it
    /// gave none).
    public static func decode(_ pem: [UInt8]) -> (count: Int, because: String) {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let count = pem.withUnsafeBytes { raw -> Int in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return 0 }
            defer { BIO_free(bio) }
            var count = 0
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                X509_free(certificate)
                count += 1
            }
            return count
        }
        // Reading always ends on an error (at least "no start line" after the last block):
        // it only explains something when nothing was read.
        return (count, count == 0 ? OpenSSLErrorQueue.because() : "")
    }
}
