#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import Foundation
import Payloads
import StrictJSON
import Timing

/// `payloads`: personalised APNs payloads built and serialised per second, one core, for
/// a typical alert campaign (template text with two per-device variables, a checked deep
/// link, route object). Foundation's JSONEncoder and JSONSerialization build the same
/// payload in the same run as the reference.
enum PayloadBenchmark {
    static let suite = BenchmarkSuite(name: "payloads", run: run)

    static let deviceCount = 20_000
    static let runs = 9

    static let routesJSON = #"""
    {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
     "hosts": ["example.com"], "routes": [{"name": "product", "path": "/product/:id", "params": {"id": "int"}, "query": {"ref": "slug"}}]}
    """#
    static let templateJSON = #"""
    {"defaults": {"sound": "default", "category": "PRICE_DROP", "thread_id": "price-alerts", "interruption_level": "active"},
     "strings": {"title": "Price drop", "body": "{{product_name}} is now {{new_price}}."}}
    """#

    static func run() {
        let (plan, devices) = makeCampaign()
        print("payloads: \(devices.count) personalised alert payloads per run (deep link + 2 variables), median of \(runs) runs, one core")

        var bytes = 0
        let pushgateBody = rate {
            bytes = 0
            for d in devices { bytes += (try? plan.body(for: d).bytes.count) ?? 0 }
            blackHole(bytes)
        }
        report("pushgate body (CampaignPlan.body)", pushgateBody, note: "\(bytes / devices.count) bytes each")

        var rng = APNsIDRandom()
        let pushgateRequest = rate {
            var n = 0
            for d in devices { n += (try? plan.request(for: d, using: &rng).body.count) ?? 0 }
            blackHole(n)
        }
        report("pushgate request (apns-id from APNsIDRandom)", pushgateRequest)

        var system = SystemRandomNumberGenerator()
        let pushgateRequestSystem = rate {
            var n = 0
            for d in devices { n += (try? plan.request(for: d, using: &system).body.count) ?? 0 }
            blackHole(n)
        }
        report("pushgate request (apns-id from system RNG)", pushgateRequestSystem)

        let encoder = JSONEncoder()
        let link = plan.link
        let encoderRate = rate {
            var n = 0
            for d in devices { n += (try? encoder.encode(CodablePayload(d, link: link)).count) ?? 0 }
            blackHole(n)
        }
        report("Foundation JSONEncoder (same payload)", encoderRate)

        let serializationRate = rate {
            var n = 0
            for d in devices { n += (try? JSONSerialization.data(withJSONObject: dictionary(d, link: link)).count) ?? 0 }
            blackHole(n)
        }
        report("Foundation JSONSerialization (same payload)", serializationRate)
        print(String(format: "  speed-up (cpu) over JSONEncoder: %.1fx, over JSONSerialization: %.1fx",
                     pushgateBody.cpu / encoderRate.cpu, pushgateBody.cpu / serializationRate.cpu))
    }

    static func makeCampaign() -> (CampaignPlan, [Device]) {
        do {
            let routes = try RouteTable(json: routesJSON, source: "bench-routes")
            let template = try Template.parse(jsonBytes: Array(templateJSON.utf8), name: "price_drop").get()
            let planner = CampaignPlanner(bundleId: "com.example.shop", links: routes,
                                          templates: TemplateLibrary([template]), requireDevices: false, clock: SystemClock())
            let campaign = #"{"template": "price_drop", "deeplink": "https://example.com/product/1042?ref=price-drop"}"#
            let plan = try planner.plan(jsonBytes: Array(campaign.utf8)).get()
            let devices = (0..<deviceCount).map { i in
                let token = String(repeating: String(format: "%08x", i), count: 8)
                return Device(token: token, variables: [
                    NamedValue(name: "product_name", value: "Trail Runner \(i % 97)"),
                    NamedValue(name: "new_price", value: "$\(50 + i % 50).99"),
                ])
            }
            return (plan, devices)
        } catch {
            fatalError("payloads benchmark setup failed: \(error)")
        }
    }

    /// Payloads per second over all devices: the median of `runs` runs, by wall clock
    /// and by this thread's CPU time (the steadier figure on a machine shared with
    /// other work, where the wall clock also counts time the thread was not running).
    struct Rate {
        var wall: Double
        var cpu: Double
    }

    static func rate(_ body: () -> Void) -> Rate {
        body()  // warm-up
        var wall: [UInt64] = []
        var cpu: [UInt64] = []
        for _ in 0..<runs {
            let w0 = monotonicNanoseconds(), c0 = threadCPUNanoseconds()
            body()
            cpu.append(threadCPUNanoseconds() - c0)
            wall.append(monotonicNanoseconds() - w0)
        }
        return Rate(wall: Double(deviceCount) / (Double(median(wall.sorted())) / 1e9),
                    cpu: Double(deviceCount) / (Double(median(cpu.sorted())) / 1e9))
    }

    static func report(_ name: String, _ r: Rate, note: String = "") {
        let padded = name.count >= 48 ? name : name + String(repeating: " ", count: 48 - name.count)
        let line = "  " + padded + String(format: " %9.0f /s wall %6.0f ns | %9.0f /s cpu %6.0f ns",
                                          r.wall, 1e9 / r.wall, r.cpu, 1e9 / r.cpu)
        print(note.isEmpty ? line : line + "  (" + note + ")")
    }

    static func body(_ d: Device) -> String {
        let name = d.variables.first { $0.name == "product_name" }?.value ?? ""
        let price = d.variables.first { $0.name == "new_price" }?.value ?? ""
        return "\(name) is now \(price)."
    }

    static func dictionary(_ d: Device, link: CanonicalLink?) -> [String: Any] {
        [
            "aps": [
                "alert": ["title": "Price drop", "body": body(d)],
                "sound": "default", "thread-id": "price-alerts", "category": "PRICE_DROP", "interruption-level": "active",
            ] as [String: Any],
            "deeplink": link?.canonical ?? "",
            "route": ["name": link?.route ?? "", "params": ["id": link?.params.first?.value ?? ""],
                      "query": ["ref": link?.query.first?.value ?? ""]] as [String: Any],
        ]
    }

    struct CodablePayload: Encodable {
        struct Alert: Encodable { let title: String; let body: String }
        struct APS: Encodable {
            let alert: Alert
            let sound = "default"
            let threadId = "price-alerts"
            let category = "PRICE_DROP"
            let interruptionLevel = "active"
            enum CodingKeys: String, CodingKey {
                case alert, sound, category
                case threadId = "thread-id"
                case interruptionLevel = "interruption-level"
            }
        }
        struct Route: Encodable { let name: String; let params: [String: String]; let query: [String: String] }
        let aps: APS
        let deeplink: String
        let route: Route

        init(_ d: Device, link: CanonicalLink?) {
            aps = APS(alert: Alert(title: "Price drop", body: PayloadBenchmark.body(d)))
            deeplink = link?.canonical ?? ""
            route = Route(name: link?.route ?? "", params: ["id": link?.params.first?.value ?? ""],
                          query: ["ref": link?.query.first?.value ?? ""])
        }
    }
}
