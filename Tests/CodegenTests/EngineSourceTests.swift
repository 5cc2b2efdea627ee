import Foundation
import Testing
import TestSupport
@testable import Codegen

@Suite struct EngineSourceTests {
    /// The embedded copy is the source the gateway compiles: every file of
    /// Sources/DeepLinks/Engine, TextSafety and Hex, byte for byte.
    @Test func embeddedFilesAreTheCompiledSources() throws {
        let engine = TestPaths.packageRoot.appendingPathComponent("Sources/DeepLinks/Engine")
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: engine.path).filter { $0.hasSuffix(".swift") }.sorted()
        let expected = onDisk.map { "Sources/DeepLinks/Engine/" + $0 } + ["Sources/StrictJSON/TextSafety.swift", "Sources/StrictJSON/Hex.swift"]
        #expect(EngineSource.files.map(\.path) == expected)
        for file in EngineSource.files {
            let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent(file.path), encoding: .utf8)
            #expect(file.text == text, "\(file.path) differs from its embedded copy")
        }
    }

    /// The transformation's assumptions: only type declarations and extensions at column 0,
    /// each closed by a `}` at column 0; imports of StrictJSON at most.
    @Test func engineFilesHaveTheLayoutTheTransformationNeeds() {
        for file in EngineSource.files {
            for line in file.text.split(separator: "\n") where line.first.map({ !$0.isWhitespace }) ?? false {
                if line.hasPrefix("//") || line.hasPrefix("}") || line.hasPrefix("extension ") { continue }
                if line.hasPrefix("import ") {
                    #expect(line == "import StrictJSON", "\(file.path): \(line)")
                    continue
                }
                #expect(EngineSource.declaredName(line) != nil || line.hasPrefix("@"), "\(file.path): unexpected top-level line: \(line)")
            }
        }
    }

    /// Every extension is of the namespace or a type inside it (that the result compiles,
    /// and agrees with the gateway, is CodegenConformanceTests' job).
    @Test func everyDeclarationMovesIntoTheNamespace() {
        let text = EngineSource.text(namespace: "ShopRouteEngine")
        #expect(!text.contains("\nimport "))
        #expect(!text.contains("\npublic "))
        #expect(text.contains("extension ShopRouteEngine.LinkScanner {"))
        #expect(text.contains("\nenum ShopRouteEngine {}\n"))
        #expect(text.contains("extension ShopRouteEngine.LinkScanner: ShopRouteEngine.Scope {}"))
        for line in text.split(separator: "\n") where line.hasPrefix("extension ") {
            #expect(line.hasPrefix("extension ShopRouteEngine"), "\(line)")
        }
        #expect(EngineSource.declaredTypeNames().isSuperset(of: ["LinkScanner", "CompiledRouteTable", "TextSafety", "ValueType"]))
    }
}
