import Foundation
import StrictJSON
import Testing

/// Secrets from files: a secret setting's variable plus `_FILE` names a file holding the
/// value (as systemd credentials and container secrets provide them), through the real binary.
@Suite struct SecretFileTests {
    static let hash = String(repeating: "ab", count: 32)

    /// A dry-run configuration with a webhook, in a folder of its own.
    static func folder() throws -> TempDir {
        try ConfigCommandTests.folder(#"{"apns": {"dryRun": true}, "webhook": {"url": "https://hooks.example.com/x"}}"#)
    }

    static func run(_ command: String, _ dir: TempDir, _ variables: [String: String]) throws -> CLIResult {
        try CLI.run(["config", command, "--config", dir.path("conf/gateway.json")], environment: ConfigCommandTests.environment(variables))
    }

    @Test func eachSecretIsReadFromItsFileWithTheFinalNewlineDropped() throws {
        let dir = try Self.folder()
        try dir.write("secrets/webhook", "a-webhook-secret-from-a-file\n")
        try dir.write("secrets/keys.json", #"[{"name": "ops", "sha256": "\#(Self.hash)", "role": "admin"}]"# + "\n")
        try dir.write("secrets/url", "postgresql://pushgate:pw@db.internal:5432/pushgate\r\n")
        let r = try Self.run("print", dir, ["PUSHGATE_WEBHOOK_SECRET_FILE": dir.path("secrets/webhook"),
                                            "PUSHGATE_SERVER_API_KEYS_FILE": dir.path("secrets/keys.json"),
                                            "PUSHGATE_STORAGE_URL_FILE": dir.path("secrets/url")])
        #expect(r.status == 0, "\(r.stderr)")
        let effective = try #require(try JSONParser().parse(r.stdout).objectValue)
        let key = effective["server"]?.objectValue?["apiKeys"]?.arrayValue?.first?.objectValue
        #expect(key?["name"] == .string("ops"), "\(r.stdout)")
        #expect(key?["role"] == .string("admin"))
        #expect(effective["webhook"]?.objectValue?["secret"] == .string("(redacted)"))
        #expect(effective["storage"]?.objectValue?["url"] == .string("(redacted)"))
        #expect(!r.stdout.contains("from-a-file") && !r.stdout.contains(":pw@"), "secrets never printed")
    }

    /// The file's text is checked like the variable's, and problems name the _FILE variable:
    /// 15 bytes and a newline is a 15-byte secret, too short.
    @Test func aFileIsCheckedLikeTheValueAndBlamedOnItsVariable() throws {
        let dir = try Self.folder()
        try dir.write("secrets/webhook", "fifteen-bytes..\n")
        try dir.write("secrets/url", "mysql://db.internal/pushgate")
        try Data([0x5B, 0xFF, 0x5D]).write(to: URL(fileURLWithPath: dir.path("secrets/keys.json")))
        let r = try Self.run("check", dir, ["PUSHGATE_WEBHOOK_SECRET_FILE": dir.path("secrets/webhook"),
                                            "PUSHGATE_STORAGE_URL_FILE": dir.path("secrets/url"),
                                            "PUSHGATE_SERVER_API_KEYS_FILE": dir.path("secrets/keys.json")])
        #expect(r.status == 2)
        #expect(r.stderr.contains("environment variable PUSHGATE_SERVER_API_KEYS_FILE: the file \"\(dir.path("secrets/keys.json"))\" is not UTF-8 text [invalidValue]"), "\(r.stderr)")
        #expect(r.stderr.contains("environment variable PUSHGATE_WEBHOOK_SECRET_FILE: expected a secret of at least 16 bytes [invalidValue]"), "\(r.stderr)")
        #expect(r.stderr.contains("environment variable PUSHGATE_STORAGE_URL_FILE: expected a postgresql:// URL (postgresql://user@host:port/database) [invalidValue]"), "\(r.stderr)")
        #expect(!r.stderr.contains("[missing]"), "a secret whose file was given is not also missing: \(r.stderr)")
        #expect(!r.stderr.contains("fifteen"), "the secret is never shown")
    }

    @Test func aMissingFileADirectoryAndBothVariablesArePreciseErrors() throws {
        let dir = try Self.folder()
        try dir.write("secrets/keys.json", "[]")
        let r = try Self.run("check", dir, ["PUSHGATE_WEBHOOK_SECRET_FILE": dir.path("secrets/none"),
                                            "PUSHGATE_STORAGE_URL_FILE": dir.path("secrets"),
                                            "PUSHGATE_SERVER_API_KEYS": "[]",
                                            "PUSHGATE_SERVER_API_KEYS_FILE": dir.path("secrets/keys.json")])
        #expect(r.status == 2)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("environment variable PUSHGATE_WEBHOOK_SECRET_FILE: cannot open \"\(dir.path("secrets/none"))\": No such file or directory [fileNotFound]"), "\(r.stderr)")
        #expect(lines.contains("environment variable PUSHGATE_STORAGE_URL_FILE: \"\(dir.path("secrets"))\" is a directory, expected a file holding the secret [fileUnreadable]"), "\(r.stderr)")
        #expect(lines.contains("environment variable PUSHGATE_SERVER_API_KEYS_FILE: expected either PUSHGATE_SERVER_API_KEYS or PUSHGATE_SERVER_API_KEYS_FILE, not both [conflictingFields]"), "\(r.stderr)")
        #expect(lines.last == "pushgate config: 3 problems in the configuration", "\(r.stderr)")
    }

    /// Only secrets have a _FILE variable; another setting's is a variable no setting reads.
    /// The storage password's file is its own setting, storage.passwordFile.
    @Test func aSettingThatIsNoSecretHasNoFileVariable() throws {
        let dir = try Self.folder()
        try dir.write("secrets/webhook", "a-webhook-secret-from-a-file")
        try dir.write("secrets/listen", "127.0.0.1:9")
        let r = try Self.run("print", dir, ["PUSHGATE_WEBHOOK_SECRET_FILE": dir.path("secrets/webhook"),
                                            "PUSHGATE_STORAGE_PASSWORD_FILE": dir.path("secrets/webhook")])
        #expect(r.status == 0, "\(r.stderr)")
        let storage = try JSONParser().parse(r.stdout).objectValue?["storage"]?.objectValue
        #expect(storage?["passwordFile"] == .string(dir.path("secrets/webhook")), "\(r.stdout)")
        let listen = try Self.run("check", dir, ["PUSHGATE_WEBHOOK_SECRET_FILE": dir.path("secrets/webhook"),
                                                 "PUSHGATE_SERVER_LISTEN_FILE": dir.path("secrets/listen")])
        #expect(listen.status == 2)
        #expect(listen.stderr.hasPrefix("environment variable PUSHGATE_SERVER_LISTEN_FILE: no setting reads this variable"), "\(listen.stderr)")
    }
}
