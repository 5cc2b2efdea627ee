import DeepLinks
import Gateway
import OptionTable
import Payloads
import StrictJSON

/// `pushgate preview --campaign FILE|- [--config PATH] [--json | --simulator DIR]`: the exact
/// APNs requests a campaign would send (the first few devices and a count), or every
/// problem with it; with `--simulator`, one Simulator `.apns` file per device and locale.
/// Exit 0 valid, 1 invalid, 2 usage or unreadable files.
enum PreviewCommand {
    static let command = Command(
        CommandDeclaration(
            path: ["preview"], summary: "show the exact APNs requests a campaign would send",
            forms: ["--campaign FILE|- [--config PATH] [--json | --simulator DIR]"],
            options: [
                .value("campaign", "FILE|-", "the campaign (JSON, docs/payloads.md); - reads it from standard input"),
                ConfigOption.option,
                .value("app", "NAME", "the configuration's app the campaign is for (else the campaign's \"app\", or the only one)"),
                .flag("json", "print the requests, or every problem, as one JSON object"),
                .value("simulator", "DIR", "write one Simulator .apns file per device and locale into DIR instead"),
            ],
            notes: ["Exit status: 0 valid, 1 the campaign is refused (every problem listed), 2 usage or configuration error."]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        guard let campaignPath = args["campaign"] else {
            return args.usageError("--campaign FILE is required")
        }
        if args.has("json"), args["simulator"] != nil {
            return args.usageError("give --json or --simulator, not both")
        }
        let app: GatewayApp
        let bytes: [UInt8]
        switch GatewayConfig.load(path: configPath(args["config"]))
            .flatMap({ c in readInput(path: campaignPath, limit: 256 << 20).map { (c, $0) } })
            .flatMap({ c, b in c.app(forCampaign: b, at: campaignPath == "-" ? standardInputName : campaignPath, option: args["app"]).map { ($0.gatewayApp, b) } }) {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let (a, b)):
            app = a
            bytes = b
        }
        let planner = app.planner

        let json = args.has("json")
        let rejection: CampaignRejection
        switch app.plan(jsonBytes: bytes) {
        case .success(let plan):
            if let directory = args["simulator"] {
                switch SimulatorFiles.write(plan: plan, planner: planner, into: directory) {
                case .success(let lines):
                    for line in lines { Output.line(line) }
                    return ExitStatus.ok
                case .failure(let failure):
                    return args.fail(failure)
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
