import Foundation
import TestSupport

/// The shared fake APNs, scripted with a dictionary in these tests.
typealias FakeAPNs = FakeAPNsServer

extension FakeAPNsServer {
    convenience init(script: [String: Any], publicKeyPEM: String? = nil) throws {
        let data = try JSONSerialization.data(withJSONObject: script)
        try self.init(scriptJSON: String(decoding: data, as: UTF8.self), publicKeyPEM: publicKeyPEM)
    }
}
