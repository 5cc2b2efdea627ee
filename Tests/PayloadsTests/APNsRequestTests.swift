import Testing
import Payloads

@Suite struct APNsRequestTests {
    @Test func headerLookupIsByExactName() {
        let r = APNsRequest(deviceToken: "ab", path: "/3/device/ab",
                            headers: [HTTPHeader("apns-push-type", "alert"), HTTPHeader("apns-topic", "com.example")],
                            body: Array("{}".utf8))
        #expect(r.method == "POST")
        #expect(r.header("apns-topic") == "com.example")
        #expect(r.header("apns-id") == nil)
    }
}
