import Foundation

// Build-time tool of the EmbedLinkEngine plugin:
//   EmbedSources OUTPUT ROOT RELATIVE-PATH...
// writes OUTPUT, a Swift file declaring `EmbeddedEngineSources.files`: each path with the
// file's text as a raw string literal.
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: EmbedSources OUTPUT ROOT PATH...\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[2])
var out = "// Generated at build time by the EmbedLinkEngine plugin. Do not edit.\n"
out += "enum EmbeddedEngineSources {\n    static let files: [(path: String, text: String)] = [\n"
for path in arguments.dropFirst(3) {
    let text: String
    do {
        text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    } catch {
        FileHandle.standardError.write(Data("EmbedSources: cannot read \(path): \(error)\n".utf8))
        exit(1)
    }
    // The fewest #s such that neither the closing delimiter nor an escape occurs inside.
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    out += "        (\"\(path)\", \(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)),\n"
}
out += "    ]\n}\n"
do {
    try out.write(to: URL(fileURLWithPath: arguments[1]), atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("EmbedSources: cannot write \(arguments[1]): \(error)\n".utf8))
    exit(1)
}
