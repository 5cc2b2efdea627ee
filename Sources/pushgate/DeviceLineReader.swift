#if canImport(Glibc)
import Glibc
#endif
import Payloads
import StrictJSON

/// Reads `--devices`: one token per line, streamed through a `LineReader`, so a file of
/// millions of tokens never sits in memory. Blank lines and `#` comments are skipped; a
/// line that is not a token is returned as a problem with its line number, never dropped;
/// a failed read is an error naming the file and the last line read, never the end of the
/// list.
final class DeviceLineReader {
    enum Item {
        case device(Device, line: Int)
        case invalid(line: Int, problem: String)
    }

    private let fd: Int32
    private var lines: LineReader
    let path: String
    let totalBytes: Int
    /// A regular file (its reads do not wait for a writer), not a pipe or a terminal.
    let isRegularFile: Bool
    var bytesRead: Int { lines.bytesRead }
    /// A line longer than this is not a token (200 hex digits plus decoration).
    static let maximumLineBytes = 4096

    /// `-` reads standard input (named `<stdin>` in messages).
    init(path: String) throws(CLIFailure) {
        self.path = path == "-" ? standardInputName : path
        fd = path == "-" ? dup(0) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIFailure(message: "\(TextSafety.quoted(path)): cannot open: \(String(cString: strerror(errno)))", status: ExitStatus.usage)
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CLIFailure(message: "\(TextSafety.quoted(path)): is a directory", status: ExitStatus.usage)
        }
        isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
        totalBytes = isRegularFile ? Int(info.st_size) : 0
        lines = LineReader(FileDescriptorSource(fd: fd), maxLineBytes: Self.maximumLineBytes, blockSize: 1 << 16)
    }

    deinit { close(fd) }

    /// The next device or invalid line; nil at the end of the file.
    func next() throws(CLIFailure) -> Item? {
        do throws(ByteReadError) {
            while let line = try lines.next() {
                switch line {
                case .tooLong:
                    return .invalid(line: lines.lineNumber, problem: "line longer than \(Self.maximumLineBytes) bytes")
                case .text(let bytes):
                    switch DeviceListLine(bytes) {
                    case .skipped: continue
                    case .token(.success(let token)): return .device(Device(token: token), line: lines.lineNumber)
                    case .token(.failure(let problem)): return .invalid(line: lines.lineNumber, problem: problem.message)
                    }
                }
            }
            return nil
        } catch {
            throw CLIFailure(message: Self.readFailure(path: path, afterLine: lines.lineNumber, error), status: ExitStatus.usage)
        }
    }

    /// How many devices the rest of the list holds (lines that `next` would return as a
    /// device), without making a string of a token that is already normal.
    func countDevices() throws(CLIFailure) -> Int {
        var devices = 0
        do throws(ByteReadError) {
            while let line = try lines.next() {
                if case .text(let bytes) = line, DeviceListLine.isDevice(bytes) { devices += 1 }
            }
        } catch {
            throw CLIFailure(message: Self.readFailure(path: path, afterLine: lines.lineNumber, error), status: ExitStatus.usage)
        }
        return devices
    }

    static func readFailure(path: String, afterLine line: Int, _ error: ByteReadError) -> String {
        let place = line == 0 ? "before the first line" : "after line \(line)"
        return "\(TextSafety.quoted(path)): cannot read \(place): \(error.message); the devices after it were not sent"
    }
}
