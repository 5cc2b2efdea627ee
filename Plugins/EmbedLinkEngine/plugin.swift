import Foundation
import PackagePlugin

/// Embeds the link engine's source files into the target that applies this plugin (the
/// code generator), at build time, so the Swift router it writes for apps carries the very
/// canonicaliser the gateway compiles. The files: every `.swift` file in
/// `Sources/DeepLinks/Engine/`, then `Sources/StrictJSON/TextSafety.swift` and
/// `Sources/StrictJSON/Hex.swift`.
@main
struct EmbedLinkEngine: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let engine = root.appending(path: "Sources/DeepLinks/Engine")
        let names = try FileManager.default.contentsOfDirectory(atPath: engine.path)
            .filter { $0.hasSuffix(".swift") }.sorted()
        let relative = names.map { "Sources/DeepLinks/Engine/" + $0 } + ["Sources/StrictJSON/TextSafety.swift", "Sources/StrictJSON/Hex.swift"]
        let inputs = relative.map { root.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedEngineSources.swift")
        return [.buildCommand(displayName: "Embedding the link engine's sources",
                              executable: try context.tool(named: "EmbedSources").url,
                              arguments: [output.path, root.path] + relative,
                              inputFiles: inputs, outputFiles: [output])]
    }
}
