import DeepLinks
import Gateway
import Payloads
import StrictJSON

/// `pushgate preview --campaign FILE [--config PATH] [--json | --simulator DIR]`: the exact
/// APNs requests a campaign would send (the first few devices and a count), or every
/// problem with it; with `--simulator`, one Simulator `.apns` file per device and locale.
/// Exit 0 valid, 1 invalid, 2 usage or unreadable files.
enum PreviewCommand {
    static let usage = "usage: pushgate preview --campaign FILE [--config PATH] [--app NAME] [--json | --simulator DIR]"

    static func run(_ arguments: [String]) -> Int32 {
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "preview", arguments, usage: usage, valued: ["campaign", "config", "app", "simulator"], flags: ["json"])
        } catch {
            return error.status
        }
        guard let campaignPath = args[option: "campaign"] else {
            Output.error("pushgate preview: --campaign FILE is required\n\(usage)")
            return ExitStatus.usage
        }
        let app: GatewayApp
        let bytes: [UInt8]
        switch GatewayConfig.load(path: configPath(args[option: "config"]))
            .flatMap({ c in readSmallFile(path: campaignPath, limit: 256 << 20).map { (c, $0) } })
            .flatMap({ c, b in c.app(forCampaign: b, at: campaignPath, option: args[option: "app"]).map { ($0.gatewayApp, b) } }) {
        case .failure(let failure):
            Output.error("pushgate preview: \(failure.message)")
            return failure.status
        case .success(let (a, b)):
            app = a
            bytes = b
        }
        let planner = app.planner

        let json = args.has("json")
        let rejection: CampaignRejection
        switch app.plan(jsonBytes: bytes) {
        case .success(let plan):
            if let directory = args[option: "simulator"] {
                switch SimulatorFiles.write(plan: plan, planner: planner, into: directory) {
                case .success(let lines):
                    for line in lines { Output.line(line) }
                    return ExitStatus.ok
                case .failure(let failure):
                    Output.error("pushgate preview: \(failure.message)")
                    return failure.status
                }
            }
            do throws(PayloadError) {
                let preview = try CampaignPreview(plan: plan) { _ in APNsID.random() }
                if json {
                    Output.writeBytes(preview.json)
                    Output.write("\n")
                } else {
                    Output.write(preview.text)
                }
                return ExitStatus.ok
            } catch {
                rejection = CampaignRejection(problems: [error])
            }
        case .failure(let r):
            rejection = r
        }
        if json {
            Output.writeBytes(CampaignPreview.json(for: rejection))
            Output.write("\n")
        } else {
            Output.write(CampaignPreview.text(for: rejection))
        }
        return ExitStatus.findings
    }
}
