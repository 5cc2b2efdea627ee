import APNs
import DeepLinks
import Foundation
import HTTPServer
import Payloads
import Storage
import StrictJSON
import Testing
@testable import Gateway

/// docs/errors.md, the program and the OpenAPI document list the same codes: a code added
/// anywhere without the others fails here, and so does a catalogued code that is gone.
@Suite struct DiagnosticCatalogueTests {
    /// Every code in the first column of a table in docs/errors.md, in order.
    static func documentedCodes() throws -> [String] {
        let text = String(decoding: try Fixtures.bytes("docs/errors.md"), as: UTF8.self)
        var codes: [String] = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            // The location table lists members, not codes.
            if ["pointer", "parameter", "header", "line"].contains(String(cell)) { continue }
            codes.append(String(cell))
        }
        return codes
    }

    @Test func everyCodeIsDocumentedOnceAndEveryDocumentedCodeExists() throws {
        let documented = try Self.documentedCodes()
        let program = Set(DiagnosticCatalogue.all.map(\.rawValue))
        #expect(Set(documented).count == documented.count, "a code is listed twice in docs/errors.md")
        let undocumented = program.subtracting(documented).sorted()
        let gone = Set(documented).subtracting(program).sorted()
        #expect(undocumented.isEmpty, "missing from docs/errors.md: \(undocumented)")
        #expect(gone.isEmpty, "docs/errors.md lists codes the program no longer has: \(gone)")
    }

    /// The typed errors that produce diagnostics: each of their codes is catalogued.
    @Test func everyTypedErrorCodeIsCatalogued() {
        let all = DiagnosticCatalogue.all
        let produced: [String] =
            JSONParseError.Code.allCases.map(\.rawValue)
            + LinkErrorCode.allCases.map(\.rawValue)
            + PayloadErrorCode.allCases.filter { $0 != .deeplinkRejected }.map(\.rawValue)
            + APNsConfigurationError.Code.allCases.map(\.rawValue)
            + SigningKeyError.Code.allCases.map(\.rawValue)
            + TransportFailure.Code.allCases.map(\.rawValue)
            + APNsReason.documented.map(\.string)
            + StorageError.Code.allCases.map(\.rawValue)
            + HTTPServerError.Code.allCases.map(\.rawValue)
            + FramingViolation.Code.allCases.map(\.rawValue)
            + AASAError.Code.allCases.map(\.rawValue)
            + AASAFinding.Code.allCases.map(\.rawValue)
        let missing = produced.filter { !all.contains(DiagnosticCode(rawValue: $0)) }
        #expect(missing.isEmpty, "codes produced but not in DiagnosticCatalogue: \(missing)")
    }

    /// No code is made up where it is used: every `DiagnosticCode(rawValue: "…")` literal in
    /// the sources is a catalogued code.
    @Test func noSourceInventsACode() throws {
        let all = DiagnosticCatalogue.all
        let sources = Fixtures.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count > 50)
        let marker = "DiagnosticCode(rawValue: \""
        var invented: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            var rest = Substring(text)
            while let range = rest.range(of: marker) {
                let literal = rest[range.upperBound...].prefix { $0 != "\"" }
                if !all.contains(DiagnosticCode(rawValue: String(literal))) {
                    invented.append("\(file.lastPathComponent): \(literal)")
                }
                rest = rest[range.upperBound...]
            }
        }
        #expect(invented.isEmpty, "codes not in DiagnosticCatalogue: \(invented)")
    }

    @Test func theOpenAPIDocumentListsTheSameCodes() throws {
        let document = try JSONParser().parse(OpenAPIDocument.text)
        func strings(_ json: JSON?) -> Set<String> { Set((json?.arrayValue ?? []).compactMap(\.stringValue)) }
        let schemas = document.objectValue?["components"]?.objectValue?["schemas"]?.objectValue
        let problem = schemas?["Problem"]?.objectValue?["properties"]?.objectValue
        #expect(strings(problem?["code"]?.objectValue?["enum"]) == Set(DiagnosticDomain.problem.codes.map(\.rawValue)))
        let item = problem?["errors"]?.objectValue?["items"]?.objectValue?["properties"]?.objectValue
        #expect(strings(item?["code"]?.objectValue?["enum"]) == Set(DiagnosticCatalogue.inProblemErrors.map(\.rawValue)))
        let linkError = schemas?["LinkResult"]?.objectValue?["oneOf"]?.arrayValue?.last?.objectValue?["properties"]?
            .objectValue?["error"]?.objectValue?["properties"]?.objectValue?["code"]?.objectValue?["enum"]
        #expect(strings(linkError) == Set(DiagnosticDomain.link.codes.map(\.rawValue)))
        let reasons = schemas?["DeviceReason"]?.objectValue?["examples"]
        #expect(strings(reasons) == Set(DiagnosticCatalogue.deviceReasons.flatMap(\.codes).map(\.rawValue)))
    }

    @Test func everyProblemTypeHasOneStatus() {
        let statuses = DiagnosticDomain.problemStatus
        #expect(Set(statuses.map(\.code)).count == statuses.count)
        #expect(statuses.allSatisfy { (400...599).contains($0.status) })
    }
}
