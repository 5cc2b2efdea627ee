/// `applinks.substitutionVariables` and Apple's predefined variables: `$(name)` in a
/// component pattern stands for any one of the variable's values, and a value may itself
/// contain `*` and `?` (but no variables). Patterns are expanded into plain patterns.
public struct AASASubstitutions: Sendable, Equatable {
    public enum ExpansionError: Error, Sendable, Equatable {
        /// `$(name)` is neither defined in the file nor predefined.
        case unknown(String)
        /// `$(region)` and `$(lang)`: their values are Apple's ISO code lists, not built in.
        case unsupported(String)
        /// More plain patterns than `maxExpansions`.
        case tooMany(Int)
    }

    /// The file's own variables (they shadow predefined names).
    public var custom: [String: [String]]

    /// At most this many plain patterns per pattern.
    public static let maxExpansions = 4096

    public init(custom: [String: [String]] = [:]) {
        self.custom = custom
    }

    private static let upper = (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { String(UnicodeScalar($0)) }
    private static let lower = (UInt8(ascii: "a")...UInt8(ascii: "z")).map { String(UnicodeScalar($0)) }
    private static let digits = (UInt8(ascii: "0")...UInt8(ascii: "9")).map { String(UnicodeScalar($0)) }

    static let predefined: [String: [String]] = [
        "alpha": upper + lower,
        "upper": upper,
        "lower": lower,
        "alnum": upper + lower + digits,
        "digit": digits,
        "xdigit": digits + ["A", "B", "C", "D", "E", "F", "a", "b", "c", "d", "e", "f"],
    ]

    func values(of name: String) throws(ExpansionError) -> [String] {
        if let values = custom[name] ?? Self.predefined[name] { return values }
        if name == "region" || name == "lang" { throw .unsupported(name) }
        throw .unknown(name)
    }

    /// Every plain pattern the text stands for; just the text when it has no `$(…)`.
    /// A `$(` without a closing `)` is literal text.
    public func expand(_ pattern: String) throws(ExpansionError) -> [String] {
        guard pattern.contains("$(") else { return [pattern] }
        var results = [""]
        var rest = Substring(pattern)
        while let open = rest.firstRange(of: "$("), let close = rest[open.upperBound...].firstIndex(of: ")") {
            let literal = String(rest[..<open.lowerBound])
            let values = try values(of: String(rest[open.upperBound..<close]))
            let count = results.count * values.count
            guard count <= Self.maxExpansions else { throw .tooMany(count) }
            results = results.flatMap { prefix in values.map { prefix + literal + $0 } }
            rest = rest[rest.index(after: close)...]
        }
        return results.map { $0 + rest }
    }
}
