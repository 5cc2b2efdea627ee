import APNsCore
import APNs
import StrictJSON
import Testing
import CurlClient

@Suite struct ConfigurationTests {
    /// The section read by the one configuration reader, and every problem it found.
    func read(_ text: String, env: [String: String] = [:], file: String = "config/gateway.json",
              requireCredentials: Bool = false) -> (APNsConfiguration, [Diagnostic]) {
        let json = try? JSONParser().parse(text)
        var reader = ConfigReader(file: file, environment: env)
        let config = APNsConfiguration.read(json, reader: &reader)
        if requireCredentials { APNsConfiguration.requireCredentials(config, reader: &reader) }
        return (config, reader.diagnostics)
    }

    func parse(_ text: String, env: [String: String] = [:], file: String = "config/gateway.json") throws -> APNsConfiguration {
        let (config, problems) = read(text, env: env, file: file, requireCredentials: true)
        if let first = problems.first { throw first }
        return config
    }

    func error(_ text: String, env: [String: String] = [:]) -> Diagnostic? {
        read(text, env: env, requireCredentials: true).1.first
    }

    /// Team and key ids follow the rule the route table's `app.teamId` follows.
    @Test func teamAndKeyIdsAreCheckedByTheOneRule() {
        let (_, problems) = read(#"{"teamId": "team123456", "keyId": "KEY12345678"}"#)
        #expect(problems.map(\.description) == [
            #"config/gateway.json#/apns/teamId: teamId "team123456" must be 10 characters of A-Z and 0-9 [invalidValue]"#,
            #"config/gateway.json#/apns/keyId: keyId "KEY12345678" must be 10 characters of A-Z and 0-9 [invalidValue]"#,
        ])
    }

    @Test func fullConfiguration() throws {
        let config = try parse("""
        {"environment":"production","url":"https://127.0.0.1:8443/","caFile":"ca.pem","teamId":"TEAM123456",
         "keyId":"KEY1234567","keyFile":"keys/AuthKey.p8","topic":"com.example.app","connections":2,
         "transportThreads":2,"maxConcurrentStreams":50,"requestTimeoutSeconds":2.5,
         "retry":{"maxAttempts":5,"baseBackoffMilliseconds":100,"maxBackoffMilliseconds":2000},"dryRun":false}
        """, file: "/etc/pushgate/gateway.json")
        #expect(config.environment == .production)
        #expect(config.baseURL == "https://127.0.0.1:8443")
        #expect(config.caFile == "/etc/pushgate/ca.pem")
        #expect(config.keyFile == "/etc/pushgate/keys/AuthKey.p8")
        #expect(config.connections == 2 && config.maxConcurrentStreams == 50 && config.requestTimeoutSeconds == 2.5)
        #expect(config.transportThreads == 2 && TransportSettings(config).threads == 2)
        #expect(config.retry == RetryPolicy(maxAttempts: 5, baseBackoffMilliseconds: 100, maxBackoffMilliseconds: 2000))
    }

    @Test func dryRunNeedsNoCredentialsAndDefaultsAreSane() throws {
        let config = try parse(#"{"environment":"sandbox","dryRun":true}"#)
        #expect(config.baseURL == "https://api.sandbox.push.apple.com")
        #expect(config.keyFile == nil && config.dryRun)
        #expect(config.connections == 2 && config.transportThreads == 2 && config.requestTimeoutSeconds == 10 && config.retry == RetryPolicy())
    }

    @Test func environmentVariablesWin() throws {
        let config = try parse(#"{"environment":"sandbox","dryRun":true,"teamId":"AAAAAAAAAA"}"#, env: [
            "PUSHGATE_APNS_ENVIRONMENT": "production", "PUSHGATE_APNS_TEAM_ID": "BBBBBBBBBB",
            "PUSHGATE_APNS_KEY_ID": "CCCCCCCCCC", "PUSHGATE_APNS_KEY_FILE": "k.p8", "PUSHGATE_APNS_DRY_RUN": "false",
            "PUSHGATE_APNS_URL": "https://localhost:9", "PUSHGATE_APNS_CONNECTIONS": "3",
            "PUSHGATE_APNS_RETRY_MAX_ATTEMPTS": "7",
        ], file: "/etc/pushgate/gateway.json")
        #expect(config.environment == .production && config.teamId == "BBBBBBBBBB" && config.keyId == "CCCCCCCCCC")
        // A path from the environment is relative to the working directory, not the file's folder.
        #expect(config.keyFile == "k.p8" && !config.dryRun && config.baseURL == "https://localhost:9" && config.connections == 3)
        #expect(config.retry.maxAttempts == 7)
    }

    @Test func errorsSayWhereAndWhat() {
        let cases: [(String, [String: String], DiagnosticCode, DiagnosticLocation)] = [
            (#"{"environment":"staging","dryRun":true}"#, [:], .invalidValue, file("environment")),
            (#"{"dryRun":true,"conections":2}"#, [:], .unknownKey, file("conections")),
            (#"{"dryRun":"yes"}"#, [:], .wrongType, file("dryRun")),
            (#"{"dryRun":true,"connections":0}"#, [:], .invalidValue, file("connections")),
            (#"{"dryRun":true,"connections":1.5}"#, [:], .invalidValue, file("connections")),
            (#"{"dryRun":true,"transportThreads":0}"#, [:], .invalidValue, file("transportThreads")),
            (#"{"dryRun":true,"retry":{"maxAttempts":3,"jitter":1}}"#, [:], .unknownKey, file("retry", "jitter")),
            (#"{"dryRun":true,"retry":{"baseBackoffMilliseconds":500,"maxBackoffMilliseconds":100}}"#, [:], .invalidValue, file("retry", "maxBackoffMilliseconds")),
            (#"{"dryRun":true,"url":"http://10.0.0.1:80"}"#, [:], .invalidValue, file("url")),
            (#"{"dryRun":true,"url":"https://h/path"}"#, [:], .invalidValue, file("url")),
            (#"{"dryRun":true,"url":"ftp://h"}"#, [:], .invalidValue, file("url")),
            (#"{"dryRun":true,"caFile":"ca.pem"}"#, [:], .invalidValue, file("caFile")),
            (#"{"dryRun":true,"teamId":"team"}"#, [:], .invalidValue, file("teamId")),
            (#"{"dryRun":true,"topic":"shop"}"#, [:], .invalidValue, file("topic")),
            (#"{"environment":"sandbox","teamId":"TEAM123456","keyId":"KEY1234567"}"#, [:], .missing, file("keyFile")),
            (#"{"dryRun":true}"#, ["PUSHGATE_APNS_DRY_RUN": "maybe"], .invalidValue, .environment("PUSHGATE_APNS_DRY_RUN")),
            (#"{"dryRun":true}"#, ["PUSHGATE_APNS_REQUEST_TIMEOUT_SECONDS": "-1"], .invalidValue, .environment("PUSHGATE_APNS_REQUEST_TIMEOUT_SECONDS")),
            (#"{"dryRun":true}"#, ["PUSHGATE_APNS_KEY_ID": "short"], .invalidValue, .environment("PUSHGATE_APNS_KEY_ID")),
        ]
        for (text, env, code, location) in cases {
            let found = error(text, env: env)
            #expect(found?.code == code, "\(text)")
            #expect(found?.location == location, "\(text)")
        }
    }

    @Test func everyProblemIsReportedAtOnce() {
        let (_, problems) = read(#"{"environment":"staging","connections":0,"teamId":"team","colour":1}"#, requireCredentials: true)
        #expect(problems.map(\.code) == [.unknownKey, .invalidValue, .invalidValue, .invalidValue, .missing, .missing])
    }

    private func file(_ keys: String...) -> DiagnosticLocation {
        .file("config/gateway.json", at: keys.reduce(JSONPath.root.appending("apns")) { $0.appending($1) })
    }

    @Test func hostileValuesAreEscapedInMessages() {
        let found = error("{\"environment\":\"\\u001b[31mred\",\"dryRun\":true}")
        #expect(found?.message.contains("\u{1B}") == false)
    }
}
