import Foundation
import StrictJSON
import TestSupport
import Testing

@Suite struct PreviewCommandTests {
    static let token = TestTokens.device

    /// A file in a fresh temporary folder, removed by the caller.
    private func temporaryFile(_ name: String, _ contents: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-preview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url
    }

    @Test(arguments: ["order-ready", "price-drop", "abandoned-cart", "inline-alert"])
    func shippedCampaignsPreviewCleanly(_ name: String) throws {
        let r = try CLI.run(["preview", "--campaign", "config/campaigns/\(name).json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("campaign ok: "))
        #expect(r.stdout.contains("authorization: bearer <redacted>\n"))
        #expect(r.stdout.contains("POST /3/device/"))
        #expect(r.stderr.isEmpty)
    }

    @Test func jsonIsOneDocumentWithTheExactBodies() throws {
        let r = try CLI.run(["preview", "--campaign", "config/campaigns/inline-alert.json", "--json"])
        #expect(r.status == 0)
        let json = try JSONParser().parse(r.stdout.trimmingCharacters(in: .newlines))
        #expect(json.objectValue?["valid"] == .bool(true))
        #expect(json.objectValue?["device_count"] == .number("4"))
        let requests = try #require(json.objectValue?["requests"]?.arrayValue)
        #expect(requests.count == 3)
        let first = try #require(requests.first?.objectValue)
        #expect(first["headers"]?.objectValue?["authorization"] == .string("bearer <redacted>"))
        #expect(first["limit"] == .number("4096"))
        #expect(first["body"]?.objectValue?["deeplink"] == .string("https://example.com/product/1042?ref=summer-sale&utm_source=push"))
    }

    @Test func invalidCampaignListsEveryProblemAndExits1() throws {
        let file = try temporaryFile("bad.json", #"{"alert": {"title": "x", "bdy": "y"}, "priority": 3, "devices": ["\#(Self.token)", "12zz"]}"#)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let r = try CLI.run(["preview", "--campaign", file.path])
        #expect(r.status == 1)
        #expect(r.stdout == """
            campaign invalid: 3 problems
            alert.bdy: unknown key "bdy"; expected one of: title, subtitle, body, title-loc-key, title-loc-args, subtitle-loc-key, subtitle-loc-args, loc-key, loc-args, launch-image [unknownKey]
            priority: APNs priority is 10 (now), 5 (power-considerate) or 1 (low), found 3 [invalidPriority]
            devices[1]: not hex: 'z' at character 3 [invalidToken]

            """)
        let j = try CLI.run(["preview", "--campaign", file.path, "--json"])
        #expect(j.status == 1)
        let json = try JSONParser().parse(j.stdout.trimmingCharacters(in: .newlines))
        let pointers = json.objectValue?["problems"]?.arrayValue?.compactMap { $0.objectValue?["pointer"]?.stringValue }
        #expect(pointers == ["/alert/bdy", "/priority", "/devices/1"])
    }

    @Test func rejectedLinkShowsTheLinksCode() throws {
        let file = try temporaryFile("link.json", #"{"alert": "x", "deeplink": "http://example.com/order/1", "devices": ["\#(Self.token)"]}"#)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let r = try CLI.run(["preview", "--campaign", file.path])
        #expect(r.status == 1)
        #expect(r.stdout.contains("[schemeNotAllowed]"))
    }

    @Test func usageAndUnreadableFilesExit2() throws {
        #expect(try CLI.run(["preview"]).status == 2)
        #expect(try CLI.run(["preview", "--campaign"]).status == 2)
        #expect(try CLI.run(["preview", "--campaign", "x.json", "--colour"]).status == 2)
        let missing = try CLI.run(["preview", "--campaign", "no/such/file.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no/such/file.json: cannot open"))
        let dir = try CLI.run(["preview", "--campaign", "config"])
        #expect(dir.status == 2)
        #expect(try CLI.run(["preview", "--campaign", "config/campaigns/inline-alert.json", "--config", "nope.json"]).status == 2)
    }

    @Test func badConfigurationExits2WithEveryProblem() throws {
        let config = try temporaryFile("gateway.json", #"{"topic": 5, "colour": "red", "apns": {"anything": true}}"#)
        defer { try? FileManager.default.removeItem(at: config.deletingLastPathComponent()) }
        let r = try CLI.run(["preview", "--campaign", "config/campaigns/inline-alert.json", "--config", config.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("gateway.json#/colour: unknown key \"colour\""))
        #expect(r.stderr.contains("gateway.json#/topic: expected a string, found a number [wrongType]"))
        #expect(r.stderr.contains("gateway.json#/apns/anything: unknown key \"anything\""))
    }

    @Test func configPathsAreRelativeToTheConfigFile() throws {
        // Run from elsewhere: routes.json and ../Templates are found beside the config.
        let tmp = FileManager.default.temporaryDirectory
        let r = try CLI.run(["preview", "--campaign", TestPaths.packageRoot.appendingPathComponent("config/campaigns/order-ready.json").path,
                             "--config", TestPaths.packageRoot.appendingPathComponent("config/gateway.json").path],
                            workingDirectory: tmp)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("template order_ready, locale pl-PL"))
    }
}

@Suite struct SimulatorPreviewTests {
    func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-simulator-\(UUID().uuidString)")
    }

    /// One file per device and locale: the campaign's pl-PL, the template's pl, and its
    /// default strings; each is the gateway's body with the Simulator's target bundle first.
    @Test func oneFilePerDeviceAndLocale() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["preview", "--campaign", "config/campaigns/order-ready.json", "--simulator", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(names == [
            "device-1-8a2f0c1d-default.apns", "device-1-8a2f0c1d-pl-PL.apns", "device-1-8a2f0c1d-pl.apns",
            "device-2-1b2c3d4e-default.apns", "device-2-1b2c3d4e-pl-PL.apns", "device-2-1b2c3d4e-pl.apns",
        ])
        #expect(r.stdout.split(separator: "\n").count == 6)
        let titles = ["default": "Your order is ready", "pl-PL": "Twoje zamówienie jest gotowe", "pl": "Twoje zamówienie jest gotowe"]
        for name in names {
            let bytes = Array(try Data(contentsOf: dir.appendingPathComponent(name)))
            #expect(bytes.count <= 4096)
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"Simulator Target Bundle":"com.example.shop","aps":{"#))
            let object = try #require(try JSONParser().parse(bytes).objectValue)
            let locale = String(name.split(separator: "-", maxSplits: 3)[3].dropLast(".apns".count))
            #expect(object["aps"]?.objectValue?["alert"]?.objectValue?["title"]?.stringValue == titles[locale])
            let link = object["deeplink"]?.stringValue ?? ""
            #expect(link.hasPrefix("https://example.com/order/"))
        }
        // The pl-PL body is byte for byte what `preview --json` shows for the first device.
        let preview = try CLI.run(["preview", "--campaign", "config/campaigns/order-ready.json"]).stdout
        let file = try String(contentsOf: dir.appendingPathComponent("device-1-8a2f0c1d-pl-PL.apns"), encoding: .utf8)
        let body = "{" + file.dropFirst(#"{"Simulator Target Bundle":"com.example.shop","#.count)
        #expect(preview.contains("\n" + body))
    }

    @Test func onlyPushTypesTheSimulatorTakes() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let campaign = dir.appendingPathExtension("json")
        defer { try? FileManager.default.removeItem(at: campaign) }
        try #"{"alert": {"body": "Hi"}, "push_type": "voip", "devices": ["\#(PreviewCommandTests.token)"]}"#
            .write(to: campaign, atomically: true, encoding: .utf8)
        let r = try CLI.run(["preview", "--campaign", campaign.path, "--simulator", dir.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("the Simulator takes only alert and background pushes, not voip"))
    }
}
