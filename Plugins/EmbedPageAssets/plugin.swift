import Foundation
import PackagePlugin

/// Embeds the `/ui` page's files (`Sources/PreviewPage/Assets/`: HTML, CSS, JavaScript)
/// into the PreviewPage module at build time, so the binary serves them with nothing
/// read from disk or fetched from elsewhere at run time.
@main
struct EmbedPageAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let folder = root.appending(path: "Sources/PreviewPage/Assets")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { !$0.hasPrefix(".") }.sorted()
        let relative = names.map { "Sources/PreviewPage/Assets/" + $0 }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedPageAssets.swift")
        return [.buildCommand(displayName: "Embedding the /ui page's files",
                              executable: try context.tool(named: "EmbedSources").url,
                              arguments: ["--enum", "EmbeddedPageAssets", output.path, root.path] + relative,
                              inputFiles: relative.map { root.appending(path: $0) }, outputFiles: [output])]
    }
}
