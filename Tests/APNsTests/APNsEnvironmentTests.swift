import Testing
import APNs

@Suite struct APNsEnvironmentTests {
    @Test func hostsAreApples() {
        #expect(APNsEnvironment.production.baseURL == "https://api.push.apple.com")
        #expect(APNsEnvironment.sandbox.baseURL == "https://api.sandbox.push.apple.com")
    }
}
