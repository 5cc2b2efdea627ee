#if canImport(Glibc)
import Glibc
#endif
import APNs
import Gateway
import HTTPServer
import OptionTable
import Storage
import StrictJSON

/// `pushgate version` and `pushgate --version`: the version, then how this binary was
/// built and which C libraries it runs with (what a bug report needs).
enum VersionCommand {
    static let command = Command(
        CommandDeclaration(path: ["version"], summary: "print the version and build information (also pushgate --version)"),
        run: { _ in print() })

    static func print() -> Int32 {
        Output.write(text)
        return ExitStatus.ok
    }

    static var text: String {
        """
        pushgate \(PushgateVersion.current)
        build: \(buildConfiguration), Swift \(swiftCompiler) compiler
        libcurl: \(LibraryVersions.curl)
        openssl: \(LibraryVersions.openSSL)
        sqlite: \(SQLiteLibrary.version)
        libmicrohttpd: \(HTTPServer.libraryVersion)
        os: \(operatingSystem)

        """
    }

    static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    /// The compiler that built this binary, to the minor version (Swift has no constant
    /// for it; `#if compiler` is the only compile-time source).
    static var swiftCompiler: String {
        #if compiler(>=7.0)
        ">= 7.0"
        #elseif compiler(>=6.5)
        "6.5"
        #elseif compiler(>=6.4)
        "6.4"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #elseif compiler(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }

    /// `Linux 6.1.0-18-amd64 x86_64 (Debian GNU/Linux 12 (bookworm))`.
    static var operatingSystem: String {
        var name = utsname()
        guard uname(&name) == 0 else { return "unknown" }
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        var text = "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))"
        if let pretty = osReleaseName() { text += " (\(pretty))" }
        return text
    }

    /// `PRETTY_NAME` from /etc/os-release, when there is one.
    static func osReleaseName() -> String? {
        guard case .success(let bytes) = readSmallFile(path: "/etc/os-release", limit: 64 << 10) else { return nil }
        for line in LineSplitter.lines(of: bytes) where line.hasPrefix("PRETTY_NAME=") {
            let value = line.dropFirst("PRETTY_NAME=".count)
            return String(value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? value.dropFirst().dropLast() : value)
        }
        return nil
    }
}
