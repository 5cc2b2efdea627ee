import APNsCore
import APNs
import DeepLinks
import Foundation
import HTTPServer
import Payloads
import Storage
import StrictJSON
import TestSupport
import Testing
@testable import Gateway
import Crypto
import Timing

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
            + ForwardingProblem.Code.allCases.map(\.rawValue)
            + AASAError.Code.allCases.map(\.rawValue)
            + AASAFinding.Code.allCases.map(\.rawValue)
        let missing = produced.filter { !all.contains(DiagnosticCode(rawValue: $0)) }
        #expect(missing.isEmpty, "codes produced but not in DiagnosticCatalogue: \(missing)")
    }

    /// No code is made up where it is used: every `DiagnosticCode(rawValue: "…")` literal in
    /// the sources is a catalogued code.
    @Test func noSourceInventsACode() throws {
        let all = DiagnosticCatalogue.all
        let sources = TestPaths.packageRoot.appendingPathComponent("Sources")
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

/// `pushgate_http_problems_total` and `pushgate_http_problem_errors_total` count the codes
/// the answers carry, and only catalogued ones: what a dashboard shows is what a client
/// got, in the vocabulary of docs/errors.md.
@Suite struct ProblemMetricTests {
    /// The `code` label values of one metric family, with their counts.
    static func samples(_ family: String, in text: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(family + "{code=\"") {
            let rest = line.dropFirst(family.count + 7)
            guard let quote = rest.firstIndex(of: "\""), let count = Int(rest[rest.index(quote, offsetBy: 3)...]) else { continue }
            out[String(rest[..<quote])] = count
        }
        return out
    }

    @Test func problemsAreCountedByTheCodesTheyCarry() throws {
        let service = try makeService()
        let json = [("content-type", "application/json")]
        let requests = [
            HTTPRequest(method: "GET", path: "/nope"),
            HTTPRequest(method: "GET", path: "/also/nope"),
            HTTPRequest(method: "DELETE", path: "/v1/echo"),
            HTTPRequest(method: "POST", path: "/v1/echo", body: Array("{}".utf8)),
            HTTPRequest(method: "POST", path: "/v1/echo", headers: json, body: Array("{\"a\":1,\"a\":2}".utf8)),
            HTTPRequest(method: "GET", path: "/open"),
        ]
        var expectedCodes: [String: Int] = [:]
        var expectedErrors: [String: Int] = [:]
        for request in requests {
            let response = service.respond(to: request)
            guard response.header("content-type") == "application/problem+json" else { continue }
            let body = try #require(try JSONParser().parse(response.body).objectValue)
            expectedCodes[try #require(body["code"]?.stringValue), default: 0] += 1
            for entry in body["errors"]?.arrayValue ?? [] {
                expectedErrors[try #require(entry.objectValue?["code"]?.stringValue), default: 0] += 1
            }
        }
        let text = service.metrics.render()
        #expect(text.contains("# TYPE pushgate_http_problems_total counter"))
        #expect(text.contains("# TYPE pushgate_http_problem_errors_total counter"))
        let codes = Self.samples("pushgate_http_problems_total", in: text)
        let errors = Self.samples("pushgate_http_problem_errors_total", in: text)
        #expect(codes == expectedCodes)
        #expect(codes["notFound"] == 2 && codes["methodNotAllowed"] == 1 && codes["unsupportedMediaType"] == 1 && codes["malformedJSON"] == 1)
        #expect(errors == expectedErrors && !errors.isEmpty, "\(errors)")
        // Catalogued: problem codes are the problem domain's, entry codes the ones errors[] can hold.
        let problemCodes = Set(DiagnosticDomain.problem.codes.map(\.rawValue))
        let entryCodes = Set(DiagnosticCatalogue.inProblemErrors.map(\.rawValue))
        #expect(Set(codes.keys).isSubset(of: problemCodes), "\(codes.keys)")
        #expect(Set(errors.keys).isSubset(of: entryCodes), "\(errors.keys)")
    }

    /// docs/http-api.md lists both families next to the catalogue they count.
    @Test func theMetricsAreDocumented() throws {
        let text = String(decoding: try Fixtures.bytes("docs/http-api.md"), as: UTF8.self)
        #expect(text.contains("pushgate_http_problems_total{code}"))
        #expect(text.contains("pushgate_http_problem_errors_total{code}"))
    }
}
