import DeepLinks
import Gateway
import OptionTable

/// `pushgate routes fingerprint [--config PATH | --routes PATH]`: the table's fingerprint,
/// the SHA-256 a generated router carries (`pushgate codegen check` compares them).
enum RoutesCommand {
    static let command = Command.group("routes", "inspect the route table", [
        Command(CommandDeclaration(
            path: ["routes", "fingerprint"], summary: "print the route table's fingerprint (the SHA-256 a generated router carries)",
            forms: ["[--config PATH | --routes PATH]"],
            options: RouteTableOptions.options),
            run: fingerprint),
    ])

    static func fingerprint(_ args: Invocation) -> Int32 {
        switch RouteTableOptions.load(args) {
        case .failure(let failure):
            return args.fail(failure)
        case .success(let table):
            Output.line(table.fingerprint)
            return ExitStatus.ok
        }
    }
}
