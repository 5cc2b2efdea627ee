import APNsCore
import DeepLinks
import Foundation
import Payloads
import StrictJSON
import Testing
import TestSupport
import Timing

/// Shared fixtures: the shipped route table and templates, and small campaign builders.
enum Fixtures {
    static func bytes(_ relativePath: String) throws -> [UInt8] { try TestPaths.bytes(relativePath) }

    static let routes: RouteTable = {
        // The shipped file; a broken one fails every test that uses it, loudly.
        let data = (try? bytes("config/routes.json")) ?? []
        do { return try RouteTable(jsonBytes: data, source: "config/routes.json") } catch {
            fatalError("config/routes.json does not load: \(error)")
        }
    }()

    static func template(_ name: String, folder: String = "Templates") throws -> Template {
        try Template.parse(jsonBytes: bytes("\(folder)/\(name).json"), name: name).get()
    }

    static let shippedTemplates: TemplateLibrary = {
        TemplateLibrary(["order_ready", "price_drop", "abandoned_cart"].compactMap { try? template($0) }
                        + [try? template("delivery_status", folder: "config/live-activity")].compactMap { $0 })
    }()

    static func planner(templates: TemplateLibrary = shippedTemplates, requireDevices: Bool = true) -> CampaignPlanner {
        CampaignPlanner(bundleId: "com.example.shop", links: routes, templates: templates, requireDevices: requireDevices, clock: SystemClock())
    }

    static let tokenA = TestTokens.device
    static let tokenB = TestTokens.other

    /// Plans campaign JSON text with the shipped routes and templates.
    static func plan(_ json: String, templates: TemplateLibrary = shippedTemplates) -> Result<CampaignPlan, CampaignRejection> {
        planner(templates: templates).plan(jsonBytes: Array(json.utf8))
    }

    static func problems(_ json: String, templates: TemplateLibrary = shippedTemplates) -> [PayloadError] {
        switch plan(json, templates: templates) {
        case .success: return []
        case .failure(let r): return r.problems
        }
    }

    /// `path: code` pairs, the compact form most assertions compare.
    static func codes(_ json: String, templates: TemplateLibrary = shippedTemplates) -> [String] {
        problems(json, templates: templates).map { "\($0.path): \($0.stableCode)" }
    }

    static func firstBody(_ json: String, templates: TemplateLibrary = shippedTemplates) throws -> String {
        let plan = try plan(json, templates: templates).get()
        let device = try #require(plan.devices.first)
        return String(decoding: try plan.body(for: device).bytes, as: UTF8.self)
    }

    static func firstRequest(_ json: String) throws -> APNsRequest {
        let plan = try plan(json).get()
        let device = try #require(plan.devices.first)
        return try plan.request(for: device, apnsID: APNsID.sequential(1))
    }
}

extension JSON {
    /// Follows object keys; nil when any step is missing.
    subscript(path keys: String...) -> JSON? {
        var current: JSON? = self
        for k in keys { current = current?.objectValue?[k] }
        return current
    }
}
