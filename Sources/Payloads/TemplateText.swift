import StrictJSON
/// Text with `{{name}}` placeholders, split once into literal runs and variable names so
/// that rendering is a walk over pieces. Values are inserted as they are: a value holding
/// `{{x}}` stays that literal text (there is no second expansion).
public struct TemplateText: Sendable, Equatable {
    public enum Piece: Sendable, Equatable {
        case literal(String)
        case variable(String)
    }

    public var pieces: [Piece]

    public init(pieces: [Piece]) {
        self.pieces = pieces
    }

    /// Text with no placeholders.
    public init(literal: String) {
        pieces = literal.isEmpty ? [] : [.literal(literal)]
    }

    /// The text with its placeholders written `{{name}}`.
    public var written: String {
        pieces.map { piece in
            switch piece {
            case .literal(let s): return s
            case .variable(let name): return "{{" + name + "}}"
            }
        }.joined()
    }

    /// Variable names in order of first use.
    public var variableNames: [String] {
        var seen: [String] = []
        for case .variable(let name) in pieces where !seen.contains(name) { seen.append(name) }
        return seen
    }

    /// Splits `text`; an unclosed `{{` or a placeholder that is not a name is an error.
    /// Names are letters, digits and `_` (spaces inside the braces are allowed).
    public static func parse(_ text: String) -> Result<TemplateText, ValueProblem> {
        var pieces: [Piece] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{") {
            if open.lowerBound > rest.startIndex { pieces.append(.literal(String(rest[..<open.lowerBound]))) }
            let afterOpen = rest[open.upperBound...]
            guard let close = afterOpen.firstRange(of: "}}") else {
                return .failure(ValueProblem("\"{{\" is never closed with \"}}\""))
            }
            let name = afterOpen[..<close.lowerBound].trimmingSpaces()
            guard isName(name) else {
                return .failure(ValueProblem("\(TextSafety.quoted("{{" + name + "}}")) is not a placeholder: names are letters, digits and '_'"))
            }
            pieces.append(.variable(String(name)))
            rest = afterOpen[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }
        return .success(TemplateText(pieces: pieces))
    }

    static func isName(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.count <= 64 && s.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
        }
    }

    /// The text with every placeholder replaced by `value(name)`; nil names the first
    /// variable that has no value.
    public func render(_ value: (String) -> String?) -> Result<String, MissingVariable> {
        var out = ""
        for piece in pieces {
            switch piece {
            case .literal(let s): out += s
            case .variable(let name):
                guard let v = value(name) else { return .failure(MissingVariable(name: name)) }
                out += v
            }
        }
        return .success(out)
    }
}

/// A placeholder with no value: an error naming it, never an empty string.
public struct MissingVariable: Error, Sendable, Equatable {
    public var name: String
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
