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
}

/// Where commands look for the route table when `--routes` is not given.
let defaultRoutesPath = "config/routes.json"

/// Reads and compiles the route table at `path`. Every failure names the file, and for
/// content problems the JSON path (`config/routes.json: at routes[1].path: …`); the
/// caller prints the message and exits 2.
func loadRouteTable(path: String) -> Result<RouteTable, CLIFailure> {
    switch readSmallFile(path: path, limit: 4 << 20) {
    case .failure(let failure):
        return .failure(failure)
    case .success(let bytes):
        do throws(RouteTableError) {
            // The table's messages quote JSON values escaped already; escape the file name too.
            return .success(try RouteTable(jsonBytes: bytes, source: TextSafety.escapedForDisplay(path)))
        } catch {
            return .failure(.configuration(error.description))
        }
    }
}

/// The whole file, refusing directories and anything over `limit` bytes (so a path such
/// as /dev/zero cannot hang or exhaust memory).
func readSmallFile(path: String, limit: Int) -> Result<[UInt8], CLIFailure> {
    let shown = TextSafety.escapedForDisplay(path)
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 { return .failure(.configuration("\(shown): cannot open: \(String(cString: strerror(errno)))")) }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
        return .failure(.configuration("\(shown): is a directory, expected a JSON file"))
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return .failure(.configuration("\(shown): cannot read: \(String(cString: strerror(errno)))"))
        }
        if n == 0 { return .success(bytes) }
        bytes.append(contentsOf: chunk[0..<n])
        if bytes.count > limit {
            return .failure(.configuration("\(shown): larger than the \(limit)-byte limit for this file"))
        }
    }
}
