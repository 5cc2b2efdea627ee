#if canImport(Glibc)
import Glibc
#endif
import Gateway
import StrictJSON

/// `pushgate hash-key [KEY]`: prints the SHA-256 to put in `server.apiKeys[].sha256`.
/// With no argument the key is read from standard input (one line), so it need not
/// appear in the shell's history or the process list.
enum HashKeyCommand {
    static let usage = "usage: pushgate hash-key [KEY]   (reads the key from stdin when not given)"

    static func run(_ arguments: [String]) -> Int32 {
        let key: String
        switch arguments.count {
        case 0:
            switch firstLineOfStandardInput() {
            case .success(let line?):
                key = line
            case .success(nil):
                Output.error("pushgate hash-key: no key on standard input\n\(usage)")
                return ExitStatus.usage
            case .failure(let error):
                Output.error("pushgate hash-key: cannot read standard input: \(error.message)")
                return ExitStatus.usage
            }
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

    /// The first line of standard input (the key), cut by the one line rule; a key is far
    /// shorter than the limit, so a longer line is no key.
    private static func firstLineOfStandardInput() -> Result<String?, ByteReadError> {
        var lines = LineReader(FileDescriptorSource(fd: 0), maxLineBytes: 64 << 10, blockSize: 1 << 12)
        do throws(ByteReadError) {
            switch try lines.next() {
            case .text(let bytes)?: return .success(String(decoding: bytes, as: UTF8.self))
            case .tooLong?: return .failure(ByteReadError("the first line is over 64 KiB"))
            case nil: return .success(nil)
            }
        } catch {
            return .failure(error)
        }
    }
}
