import DeepLinks
import Gateway
import StrictJSON

/// `pushgate routes fingerprint [--config PATH [--app NAME] | --routes PATH]`: the table's fingerprint,
/// the SHA-256 a generated router carries (`pushgate codegen check` compares them).
enum RoutesCommand {
    static let usage = "usage: pushgate routes fingerprint [--config PATH [--app NAME] | --routes PATH]"

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.first == "fingerprint" else {
            let problem = arguments.first.map { "unknown subcommand \(TextSafety.quoted($0))" } ?? "give a subcommand: fingerprint"
            Output.error("pushgate routes: \(problem)\n\(usage)")
            return ExitStatus.usage
        }
        let args: Arguments
        do {
            args = try Arguments.forOptionsOnly(command: "routes fingerprint", Array(arguments.dropFirst()), usage: usage,
                                                valued: RouteTableOptions.valued)
        } catch {
            return error.status
        }
        switch RouteTableOptions.load(args) {
        case .failure(let failure):
            Output.error("pushgate routes fingerprint: \(failure.message)")
            return failure.status
        case .success(let table):
            Output.line(table.fingerprint)
            return ExitStatus.ok
        }
    }
}
