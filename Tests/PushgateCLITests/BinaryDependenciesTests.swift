import Foundation
import Testing

/// The executable links no Foundation: each module that imported it would make every
/// command's start-up pay for mapping and relocating all of Foundation (and the release
/// binary carry it: 85 MB instead of 27). The debug build links Swift's libraries
/// dynamically, so its needed libraries show any import.
@Suite struct BinaryDependenciesTests {
    @Test func theBinaryNeedsNoFoundation() throws {
        let result = try CLI.run(["-d", CLI.executable.path], program: URL(fileURLWithPath: "/usr/bin/readelf"))
        #expect(result.status == 0, "\(result.stderr)")
        let needed = result.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "readelf listed no needed libraries: \(result.stdout)")
        #expect(!needed.contains { $0.contains("Foundation") }, "\(needed.joined(separator: "\n"))")
    }
}
