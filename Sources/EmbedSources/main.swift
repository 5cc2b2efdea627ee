import Foundation

// Build-time tool of the EmbedLinkEngine and EmbedPageAssets plugins:
//   EmbedSources [--enum NAME] OUTPUT ROOT RELATIVE-PATH...
// writes OUTPUT, a Swift file declaring `NAME.files` (default `EmbeddedEngineSources`):
// each path with the file's text as a raw string literal.
var arguments = Array(CommandLine.arguments.dropFirst())
var enumName = "EmbeddedEngineSources"
if arguments.first == "--enum", arguments.count >= 2 {
    enumName = arguments[1]
    arguments.removeFirst(2)
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: EmbedSources [--enum NAME] OUTPUT ROOT PATH...\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[1])
var out = "// Generated at build time by a pushgate build-tool plugin. Do not edit.\n"
out += "enum \(enumName) {\n    static let files: [(path: String, text: String)] = [\n"
for path in arguments.dropFirst(2) {
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
    try out.write(to: URL(fileURLWithPath: arguments[0]), atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("EmbedSources: cannot write \(arguments[0]): \(error)\n".utf8))
    exit(1)
}
