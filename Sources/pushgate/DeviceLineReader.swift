#if canImport(Glibc)
import Glibc
#endif
import Payloads

/// Reads `--devices`: one token per line, in 64 KiB chunks, so a file of millions of
/// tokens never sits in memory. Blank lines and `#` comments are skipped; a line that is
/// not a token is returned as a problem with its line number, never dropped.
final class DeviceLineReader {
    enum Item {
        case device(Device, line: Int)
        case invalid(line: Int, problem: String)
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private(set) var lineNumber = 0
    private(set) var bytesRead = 0
    let totalBytes: Int
    /// A line longer than this is not a token (200 hex digits plus decoration).
    static let maximumLineBytes = 4096

    init(path: String) throws(CLIFailure) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIFailure(message: "\(quotedForDisplay(path)): cannot open: \(String(cString: strerror(errno)))", status: ExitStatus.usage)
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CLIFailure(message: "\(quotedForDisplay(path)): is a directory", status: ExitStatus.usage)
        }
        totalBytes = (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
    }

    deinit { close(fd) }

    func next() -> Item? {
        while let (line, complete) = nextLine() {
            lineNumber += 1
            guard complete else {
                return .invalid(line: lineNumber, problem: "line longer than \(Self.maximumLineBytes) bytes")
            }
            let text = String(decoding: line, as: UTF8.self)
            let trimmed = text.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            switch Device.parse(trimmed) {
            case .success(let device): return .device(device, line: lineNumber)
            case .failure(let problem): return .invalid(line: lineNumber, problem: problem.message)
            }
        }
        return nil
    }

    /// The next line without its terminator (a final line without one counts too), or
    /// `complete == false` for a line over the limit, which is skipped to its end so that
    /// it counts as one line and memory stays bounded.
    private func nextLine() -> (ArraySlice<UInt8>, complete: Bool)? {
        var overlong = false
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var line = buffer[start..<newline]
                start = newline + 1
                if line.last == 0x0D { line = line.dropLast() }
                return overlong || line.count > Self.maximumLineBytes ? ([], false) : (line, true)
            }
            if atEnd {
                guard start < buffer.count || overlong else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return overlong || line.count > Self.maximumLineBytes ? ([], false) : (line, true)
            }
            if buffer.count - start > Self.maximumLineBytes {
                overlong = true
                start = buffer.count  // drop what we have of it; keep reading to its end
            }
            fill()
        }
    }

    private func fill() {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { atEnd = true; return }
            bytesRead += n
            buffer.append(contentsOf: chunk[0..<n])
            return
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !($0 == " " || $0 == "\t" || $0 == "\r") }) else { return "" }
        let last = scalars.lastIndex(where: { !($0 == " " || $0 == "\t" || $0 == "\r") }) ?? first
        return String(scalars[first...last])
    }
}
