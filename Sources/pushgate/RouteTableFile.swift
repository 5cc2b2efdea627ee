#if canImport(Glibc)
import Glibc
#endif
import DeepLinks
import StrictJSON

/// A failure a command reports and exits with (message for stderr, exit status).
struct CLIFailure: Error {
    let message: String
    let status: Int32

    static func configuration(_ message: String) -> CLIFailure {
        CLIFailure(message: message, status: ExitStatus.usage)
    }

    /// Configuration problems, one `place: message [code]` line each (exit 2).
    static func diagnostics(_ diagnostics: [Diagnostic]) -> CLIFailure {
        configuration(diagnostics.map(\.description).joined(separator: "\n"))
    }
}

/// Where commands look for the route table when `--routes` is not given.
let defaultRoutesPath = "config/routes.json"

/// Reads and compiles the route table at `path`. Every failure names the file, and for
/// content problems the JSON pointer (`config/routes.json#/routes/1/path: …`); the caller
/// prints the message and exits 2.
func loadRouteTable(path: String) -> Result<RouteTable, CLIFailure> {
    switch readSmallFile(path: path, limit: 4 << 20) {
    case .failure(let failure):
        return .failure(failure)
    case .success(let bytes):
        do throws(RouteTableError) {
            return .success(try RouteTable(jsonBytes: bytes, source: path))
        } catch {
            return .failure(.diagnostics(error.diagnostics))
        }
    }
}

/// The whole file, refusing directories and anything over `limit` bytes (so a path such
/// as /dev/zero cannot hang or exhaust memory).
func readSmallFile(path: String, limit: Int) -> Result<[UInt8], CLIFailure> {
    readFile(path, limit: limit, at: .file(path, at: .root)).mapError { .diagnostics([$0]) }
}

/// What a command reads from a file or, for `-`, from standard input (named `<stdin>` in
/// messages), with the same limit and errors.
func readInput(path: String, limit: Int) -> Result<[UInt8], CLIFailure> {
    guard path == "-" else { return readSmallFile(path: path, limit: limit) }
    return readAll(fd: 0, limit: limit, at: .file(standardInputName, at: .root), shown: "", subject: "is")
        .mapError { .diagnostics([$0]) }
}

/// How messages name standard input.
let standardInputName = "<stdin>"

/// The same, with a failure located at `location` (the setting that named the file).
func readFile(_ path: String, limit: Int, at location: DiagnosticLocation, expected: String = "a JSON file") -> Result<[UInt8], Diagnostic> {
    // The file's own location names it already; a setting's location does not.
    let isItself = location == .file(path, at: .root)
    let shown = isItself ? "" : " " + TextSafety.quoted(path)
    let subject = isItself ? "is" : TextSafety.quoted(path) + " is"
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
        let number = errno
        let reason = String(cString: strerror(number))
        return .failure(Diagnostic(number == ENOENT ? .fileNotFound : .fileUnreadable, at: location, "cannot open\(shown): \(reason)"))
    }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
        return .failure(Diagnostic(.fileUnreadable, at: location, "\(subject) a directory, expected \(expected)"))
    }
    return readAll(fd: fd, limit: limit, at: location, shown: shown, subject: subject)
}

/// Everything `fd` has, up to `limit` bytes.
private func readAll(fd: Int32, limit: Int, at location: DiagnosticLocation, shown: String, subject: String) -> Result<[UInt8], Diagnostic> {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return .failure(Diagnostic(.fileUnreadable, at: location, "cannot read\(shown): \(String(cString: strerror(errno)))"))
        }
        if n == 0 { return .success(bytes) }
        bytes.append(contentsOf: chunk[0..<n])
        if bytes.count > limit {
            return .failure(Diagnostic(.fileTooLarge, at: location, "\(subject) larger than the \(limit)-byte limit for this file"))
        }
    }
}
