internal import COpenSSL

/// X.509 certificates in PEM text, as OpenSSL decodes them.
public enum PEMCertificates {
    /// How many `BEGIN CERTIFICATE` blocks OpenSSL can decode, reading from the start
    /// until the first it cannot.
    public static func count(in pem: [UInt8]) -> Int {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        return pem.withUnsafeBytes { raw -> Int in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return 0 }
            defer { BIO_free(bio) }
            var count = 0
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                X509_free(certificate)
                count += 1
            }
            return count
        }
    }
}
