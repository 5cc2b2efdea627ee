#if canImport(Glibc)
import Glibc
#endif
import Gateway
import OptionTable
import StrictJSON

/// `pushgate hash-key [KEY]`: prints the SHA-256 to put in `server.apiKeys[].sha256`.
/// With no argument the key is read from standard input (one line), so it need not
/// appear in the shell's history or the process list.
enum HashKeyCommand {
    static let command = Command(
        CommandDeclaration(path: ["hash-key"], summary: "print the SHA-256 of an API key for the configuration",
                           forms: ["[KEY]", "< FILE"],
                           positionals: [Positional("KEY", "the key (room for 128 random bits: 32 hex digits, 22 base64 characters); when left out, the first line of standard input")],
                           notes: ["A key that starts with - goes after --: pushgate hash-key -- -KEY."]),
        run: run)

    static func run(_ args: Invocation) -> Int32 {
        let key: String
        if let given = args.positionals.first {
            key = given
        } else {
            switch firstLineOfStandardInput() {
            case .success(let line?): key = line
            case .success(nil): return args.usageError("no key on standard input")
            case .failure(let error): return args.fail("cannot read standard input: \(error.message)")
            }
        }
        if let weakness = APIKeyring.weakness(key) {
            return args.fail(weakness)
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
