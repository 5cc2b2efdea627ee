#if canImport(Glibc)
import Glibc
#endif
import Gateway

/// `pushgate hash-key [KEY]`: prints the SHA-256 to put in `server.apiKeys[].sha256`.
/// With no argument the key is read from standard input (one line), so it need not
/// appear in the shell's history or the process list.
enum HashKeyCommand {
    static let usage = "usage: pushgate hash-key [KEY]   (reads the key from stdin when not given)"

    static func run(_ arguments: [String]) -> Int32 {
        let key: String
        switch arguments.count {
        case 0:
            guard let line = readLine(strippingNewline: true) else {
                Output.error("pushgate hash-key: no key on standard input\n\(usage)")
                return ExitStatus.usage
            }
            key = line.hasSuffix("\r") ? String(line.dropLast()) : line
        case 1 where arguments[0] != "--help":
            key = arguments[0]
        default:
            Output.error(usage)
            return arguments == ["--help"] ? ExitStatus.ok : ExitStatus.usage
        }
        guard key.utf8.count >= 16 else {
            Output.error("pushgate hash-key: a key must be at least 16 bytes; use a random one (e.g. openssl rand -hex 32)")
            return ExitStatus.usage
        }
        Output.line(APIKeyring.hash(key))
        return ExitStatus.ok
    }
}
