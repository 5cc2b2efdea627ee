#if canImport(Glibc)
import Glibc
#endif
import Payloads
import StrictJSON

/// `pushgate preview --simulator DIR`: one `.apns` file per device and locale
/// (`SimulatorPayload` is the format).
enum SimulatorFiles {
    static let maxFileBytes = SimulatorPayload.maxFileBytes

    /// The locales to render: the campaign's, then every other locale its template has,
    /// then the template's default strings (nil); a campaign without a template has one.
    static func locales(of plan: CampaignPlan) -> [String?] {
        guard case .template(_, let own) = plan.campaign.message, let template = plan.template else { return [nil] }
        var out: [String?] = [own]
        for tag in template.locales.keys.sorted() where tag != own?.lowercased() { out.append(tag) }
        if own != nil { out.append(nil) }
        return out
    }

    /// Writes the files; returns the lines to print (one per file) or the failure.
    static func write(plan: CampaignPlan, planner: CampaignPlanner, into directory: String) -> Result<[String], CLIFailure> {
        guard SimulatorPayload.accepts(plan.pushType) else {
            return .failure(.configuration("--simulator: the Simulator takes only alert and background pushes, not \(plan.pushType.rawValue)"))
        }
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            return .failure(.configuration("\(TextSafety.escapedForDisplay(directory)): cannot create: \(String(cString: strerror(errno)))"))
        }
        var lines: [String] = []
        for locale in locales(of: plan) {
            var localized = plan
            if locale != locales(of: plan)[0], case .template(let name, _) = plan.campaign.message {
                var campaign = plan.campaign
                campaign.message = .template(name: name, locale: locale)
                switch planner.plan(campaign) {
                case .success(let p): localized = p
                case .failure(let rejection):
                    return .failure(CLIFailure(message: "locale \(locale): " + CampaignPreview.text(for: rejection), status: ExitStatus.findings))
                }
            }
            for (i, device) in localized.devices.enumerated() {
                let body: PayloadBody
                do throws(PayloadError) {
                    body = try localized.body(for: device, at: CampaignPlan.devicesPath.appending(index: i))
                } catch {
                    return .failure(CLIFailure(message: error.description, status: ExitStatus.findings))
                }
                let bytes = SimulatorPayload.fileBytes(body: body.bytes, bundle: plan.topic)
                let name = SimulatorPayload.fileName(index: i, token: device.token, locale: locale)
                let path = directory + "/" + name
                if case .failure(let failure) = writeTextFile(path: path, String(decoding: bytes, as: UTF8.self)) {
                    return .failure(failure)
                }
                var line = "\(path) (\(bytes.count) bytes"
                if bytes.count > maxFileBytes { line += "; over the Simulator's \(maxFileBytes)-byte limit" }
                lines.append(line + ")")
            }
        }
        return .success(lines)
    }
}
