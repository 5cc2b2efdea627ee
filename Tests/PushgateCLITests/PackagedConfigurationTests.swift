import Foundation
import StrictJSON
import TestSupport
import Testing

/// The configuration the Debian package installs in /etc/pushgate is the repository's, with
/// only its paths moved: the templates beside it, the database in /var/lib/pushgate.
/// (Tests/Package/deb-test.sh checks the installed copy with `pushgate config check`.)
@Suite struct PackagedConfigurationTests {
    static func object(_ path: String) throws -> JSONObject {
        let bytes = try [UInt8](Data(contentsOf: TestPaths.packageRoot.appendingPathComponent(path)))
        return try #require(try JSONParser().parse(bytes).objectValue)
    }

    /// `object` with the member at `path` (keys) replaced by `value`.
    static func replacing(_ object: JSONObject, _ path: [String], with value: JSON) -> JSONObject {
        var copy = object
        guard let key = path.first, let i = copy.members.firstIndex(where: { $0.key == key }) else { return copy }
        if path.count == 1 {
            copy.members[i].value = value
        } else if let inner = copy.members[i].value.objectValue {
            copy.members[i].value = .object(replacing(inner, Array(path.dropFirst()), with: value))
        }
        return copy
    }

    @Test func theShippedConfigurationDiffersOnlyInItsPaths() throws {
        let packaged = try Self.object("packaging/gateway.json")
        #expect(packaged["routes"] == .string("routes.json"))
        #expect(packaged["templates"] == .string("templates"))
        #expect(packaged["storage"]?.objectValue?["path"] == .string("/var/lib/pushgate/pushgate.db"))
        #expect(packaged["apns"]?.objectValue?["dryRun"] == .bool(true), "the package starts in dry run")
        var repository = try Self.object("config/gateway.json")
        for (path, value) in [(["routes"], "routes.json"), (["templates"], "templates"), (["storage", "path"], "/var/lib/pushgate/pushgate.db")] {
            repository = Self.replacing(repository, path, with: .string(value))
        }
        #expect(JSONWriter.serialize(.object(repository)) == JSONWriter.serialize(.object(packaged)))
    }
}
