import APNs
import StrictJSON
import Testing

@Suite struct ConfigurationTests {
    func parse(_ text: String, env: [String: String] = [:], base: String = ".") throws(APNsConfigurationError) -> APNsConfiguration {
        let object = (try? JSONParser().parse(text))?.objectValue
        return try APNsConfiguration.parse(object, environment: env, baseDirectory: base)
    }

    func error(_ text: String, env: [String: String] = [:]) -> APNsConfigurationError? {
        do { _ = try parse(text, env: env); return nil } catch { return error }
    }

    @Test func fullConfiguration() throws {
        let config = try parse("""
        {"environment":"production","url":"https://127.0.0.1:8443/","caFile":"ca.pem","teamId":"TEAM123456",
         "keyId":"KEY1234567","keyFile":"keys/AuthKey.p8","topic":"com.example.app","connections":2,
         "maxConcurrentStreams":50,"requestTimeoutSeconds":2.5,
         "retry":{"maxAttempts":5,"baseBackoffMilliseconds":100,"maxBackoffMilliseconds":2000},"dryRun":false}
        """, base: "/etc/pushgate")
        #expect(config.environment == .production)
        #expect(config.baseURL == "https://127.0.0.1:8443")
        #expect(config.caFile == "/etc/pushgate/ca.pem")
        #expect(config.keyFile == "/etc/pushgate/keys/AuthKey.p8")
        #expect(config.connections == 2 && config.maxConcurrentStreams == 50 && config.requestTimeoutSeconds == 2.5)
        #expect(config.retry == RetryPolicy(maxAttempts: 5, baseBackoffMilliseconds: 100, maxBackoffMilliseconds: 2000))
    }

    @Test func dryRunNeedsNoCredentialsAndDefaultsAreSane() throws {
        let config = try parse(#"{"environment":"sandbox","dryRun":true}"#)
        #expect(config.baseURL == "https://api.sandbox.push.apple.com")
        #expect(config.keyFile == nil && config.dryRun)
        #expect(config.connections == 1 && config.requestTimeoutSeconds == 10 && config.retry == RetryPolicy())
    }

    @Test func environmentVariablesWin() throws {
        let config = try parse(#"{"environment":"sandbox","dryRun":true,"teamId":"AAAAAAAAAA"}"#, env: [
            "PUSHGATE_APNS_ENVIRONMENT": "production", "PUSHGATE_APNS_TEAM_ID": "BBBBBBBBBB",
            "PUSHGATE_APNS_KEY_ID": "CCCCCCCCCC", "PUSHGATE_APNS_KEY_FILE": "/k.p8", "PUSHGATE_APNS_DRY_RUN": "false",
            "PUSHGATE_APNS_URL": "https://localhost:9", "PUSHGATE_APNS_CONNECTIONS": "3",
        ])
        #expect(config.environment == .production && config.teamId == "BBBBBBBBBB" && config.keyId == "CCCCCCCCCC")
        #expect(config.keyFile == "/k.p8" && !config.dryRun && config.baseURL == "https://localhost:9" && config.connections == 3)
    }

    @Test func errorsSayWhereAndWhat() {
        let cases: [(String, [String: String], APNsConfigurationError.Code, String)] = [
            (#"{"environment":"staging","dryRun":true}"#, [:], .invalidValue, "apns.environment"),
            (#"{"dryRun":true,"conections":2}"#, [:], .unknownSetting, "apns.conections"),
            (#"{"dryRun":"yes"}"#, [:], .wrongType, "apns.dryRun"),
            (#"{"dryRun":true,"connections":0}"#, [:], .invalidValue, "apns.connections"),
            (#"{"dryRun":true,"connections":1.5}"#, [:], .invalidValue, "apns.connections"),
            (#"{"dryRun":true,"retry":{"maxAttempts":3,"jitter":1}}"#, [:], .unknownSetting, "apns.retry.jitter"),
            (#"{"dryRun":true,"retry":{"baseBackoffMilliseconds":500,"maxBackoffMilliseconds":100}}"#, [:], .invalidValue, "apns.retry.maxBackoffMilliseconds"),
            (#"{"dryRun":true,"url":"http://10.0.0.1:80"}"#, [:], .invalidValue, "apns.url"),
            (#"{"dryRun":true,"url":"https://h/path"}"#, [:], .invalidValue, "apns.url"),
            (#"{"dryRun":true,"url":"ftp://h"}"#, [:], .invalidValue, "apns.url"),
            (#"{"dryRun":true,"caFile":"ca.pem"}"#, [:], .invalidValue, "apns.caFile"),
            (#"{"dryRun":true,"teamId":"team"}"#, [:], .invalidValue, "apns.teamId"),
            (#"{"environment":"sandbox","teamId":"TEAM123456","keyId":"KEY1234567"}"#, [:], .missingSetting, "apns.keyFile"),
            (#"{"dryRun":true}"#, ["PUSHGATE_APNS_DRY_RUN": "maybe"], .invalidValue, "environment variable PUSHGATE_APNS_DRY_RUN"),
            (#"{"dryRun":true}"#, ["PUSHGATE_APNS_REQUEST_TIMEOUT_SECONDS": "-1"], .invalidValue, "environment variable PUSHGATE_APNS_REQUEST_TIMEOUT_SECONDS"),
        ]
        for (text, env, code, location) in cases {
            let found = error(text, env: env)
            #expect(found?.code == code, "\(text)")
            #expect(found?.location == location, "\(text)")
        }
    }

    @Test func hostileValuesAreEscapedInMessages() {
        let found = error("{\"environment\":\"\\u001b[31mred\",\"dryRun\":true}")
        #expect(found?.message.contains("\u{1B}") == false)
    }
}
