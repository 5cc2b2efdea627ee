import StrictJSON

/// The link engine's source as the generated file carries it: the files the gateway
/// compiles (embedded at build time, see Plugins/EmbedLinkEngine), each declaration moved
/// into one namespace enum so that nothing the engine declares can clash with the app's
/// own names. The text of every file is otherwise verbatim; only these lines change:
///
/// - `import …` lines are dropped (the engine needs the standard library only);
/// - `public` modifiers are dropped (the namespace is internal to the app's module);
/// - a top-level `extension Name` of an engine type becomes `extension Namespace.Name`;
/// - runs of other top-level declarations are wrapped in `extension Namespace { … }`;
/// - each extended type conforms to `Namespace.Scope`, whose typealiases name the engine's
///   types inside those extensions.
///
/// This relies on the engine's layout, which a test checks: top-level declarations start
/// at column 0 and end with a `}` at column 0, and nothing else is at column 0.
public enum EngineSource {
    /// The embedded files: path in the repository and text.
    public static var files: [(path: String, text: String)] { EmbeddedEngineSources.files }

    public static let beginMarker = "// MARK: - pushgate link engine"
    public static let endMarker = "// MARK: - end of the pushgate link engine"

    /// The engine in `namespace`, between the begin and end markers.
    public static func text(namespace: String) -> String {
        let declared = declaredTypeNames()
        var out = "\(beginMarker): \(namespace)\n"
        out += "// The canonicaliser pushgate runs, file for file (see the paths below), declared inside\n"
        out += "// `\(namespace)` so that none of its names can clash with the app's. Do not edit.\n\n"
        out += "enum \(namespace) {}\n"
        var extended: Set<String> = []
        for file in files {
            out += "\n// MARK: \(file.path)\n\n"
            out += transform(file.text, namespace: namespace, declared: declared, extended: &extended)
        }
        // An `extension Namespace.X` does not see X's sibling types (unqualified lookup skips
        // the enclosing namespace), so each extended type conforms to `Scope`, which names them.
        out += "\n// MARK: names for the extensions above\n\n"
        out += "extension \(namespace) {\n    protocol Scope {}\n}\n\n"
        out += "extension \(namespace).Scope {\n"
        for name in declared.subtracting(privateTypeNames()).sorted() { out += "    typealias \(name) = \(namespace).\(name)\n" }
        out += "}\n"
        for name in extended.sorted() { out += "\nextension \(namespace).\(name): \(namespace).Scope {}" }
        out += "\n"
        out += "\n\(endMarker)\n"
        return out
    }

    /// The names of the types the engine declares at top level.
    static func declaredTypeNames() -> Set<String> {
        var names: Set<String> = []
        for file in files {
            for line in lines(of: file.text) {
                if let name = declaredName(line) { names.insert(name) }
            }
        }
        return names
    }

    /// Top-level types declared `private` or `fileprivate` (no typealias may name them).
    static func privateTypeNames() -> Set<String> {
        var names: Set<String> = []
        for file in files {
            for line in lines(of: file.text) where line.hasPrefix("private ") || line.hasPrefix("fileprivate ") {
                if let name = declaredName(line) { names.insert(name) }
            }
        }
        return names
    }

    /// The file's lines, cut by the one line splitter.
    static func lines(of text: String) -> [Substring] {
        LineSplitter.lines(of: Array(text.utf8)).map { Substring($0) }
    }

    static let modifiers: Set<Substring> = ["public", "private", "fileprivate", "internal", "final", "indirect"]
    static let typeKeywords: Set<Substring> = ["struct", "enum", "class", "protocol", "typealias", "actor"]

    /// `public final class Foo: Bar {` → `Foo`; nil for anything that does not declare a type at column 0.
    static func declaredName(_ line: Substring) -> String? {
        guard let first = line.first, first.isLetter else { return nil }
        var words = line.split(separator: " ")[...]
        while let w = words.first, modifiers.contains(w) { words = words.dropFirst() }
        guard let keyword = words.first, typeKeywords.contains(keyword), words.count >= 2 else { return nil }
        return identifierPrefix(words[words.startIndex + 1])
    }

    static func identifierPrefix(_ s: Substring) -> String {
        String(s.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    static func transform(_ text: String, namespace: String, declared: Set<String>, extended: inout Set<String>) -> String {
        var out = ""
        var wrapOpen = false
        var inExtension = false
        for line in lines(of: text) {
            if line.hasPrefix("import ") { continue }
            var line = line
            if let r = line.firstRange(of: "public "), line[..<r.lowerBound].allSatisfy({ $0 == " " }) {
                line = line[..<r.lowerBound] + line[r.upperBound...]
            }
            let atColumn0 = line.first.map { !$0.isWhitespace } ?? false
            if atColumn0, line.hasPrefix("extension ") {
                if wrapOpen { out += "}\n"; wrapOpen = false }
                let rest = line.dropFirst("extension ".count)
                let name = identifierPrefix(rest)
                if declared.contains(name) {
                    out += "extension \(namespace).\(rest)\n"
                    extended.insert(name)
                } else {
                    out += "\(line)\n"
                }
                inExtension = !line.hasSuffix("}")
                continue
            }
            if atColumn0, line.hasPrefix("}") {
                out += "\(line)\n"
                inExtension = false
                continue
            }
            if atColumn0, !inExtension, !line.hasPrefix("//"), !wrapOpen {
                out += "extension \(namespace) {\n"
                wrapOpen = true
            }
            out += "\(line)\n"
        }
        if wrapOpen { out += "}\n" }
        return out
    }
}
