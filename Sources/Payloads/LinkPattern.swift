import StrictJSON

/// A deep-link pattern such as `https://example.com/order/{{order_id}}?ref={{ref}}`.
/// A substituted value is percent-encoded as ONE path segment or ONE query value — a
/// value holding `/`, `?`, `&` or `#` can never change the link's shape — and the result
/// then goes through the route table like any other link.
public struct LinkPattern: Sendable, Equatable {
    public var text: TemplateText

    public static func parse(_ pattern: String) -> Result<LinkPattern, ValueProblem> {
        TemplateText.parse(pattern).map(LinkPattern.init(text:))
    }

    /// The link with every placeholder filled and encoded.
    public func render(_ value: (String) -> String?) -> Result<String, MissingVariable> {
        var out = ""
        for piece in text.pieces {
            switch piece {
            case .literal(let s):
                out += s
            case .variable(let name):
                guard let v = value(name) else { return .failure(MissingVariable(name: name)) }
                out += Self.percentEncoded(v)
            }
        }
        return .success(out)
    }

    /// RFC 3986 unreserved characters stay; every other byte of the UTF-8 becomes `%XX`.
    /// The same strict set serves path segments and query values (a space is `%20`,
    /// never `+`).
    static func percentEncoded(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        for b in value.utf8 {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E:
                out.append(b)
            default:
                Hex.appendPercentEscape(b, to: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
