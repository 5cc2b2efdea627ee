import StrictJSON

/// The JSON object `check-link` prints for one link (one line of JSON Lines):
/// `{"ok":true,"canonical":…,"route":…,"params":{…},"query":{…}}` or
/// `{"ok":false,"error":{"code":…,"message":…}}`. Strings go through StrictJSON's
/// escaper, so unsafe characters only ever appear as `\uXXXX`.
public enum LinkResultJSON {
    public static func append(_ result: LinkCheckResult, to out: inout [UInt8]) {
        switch result {
        case .accepted(let link):
            out.append(contentsOf: #"{"ok":true,"canonical":"#.utf8)
            JSONWriter.appendQuoted(link.canonical, to: &out)
            out.append(contentsOf: #","route":"#.utf8)
            JSONWriter.appendQuoted(link.route, to: &out)
            out.append(contentsOf: #","params":"#.utf8)
            appendObject(link.params, to: &out)
            out.append(contentsOf: #","query":"#.utf8)
            appendObject(link.query, to: &out)
            out.append(UInt8(ascii: "}"))
        case .rejected(let rejection):
            out.append(contentsOf: #"{"ok":false,"error":{"code":"#.utf8)
            JSONWriter.appendQuoted(rejection.code.rawValue, to: &out)
            out.append(contentsOf: #","message":"#.utf8)
            JSONWriter.appendQuoted(rejection.message, to: &out)
            out.append(contentsOf: "}}".utf8)
        }
    }

    public static func line(_ result: LinkCheckResult) -> [UInt8] {
        var out: [UInt8] = []
        append(result, to: &out)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// Names are unique here (the canonicaliser rejects duplicate query keys), so an
    /// object keeps every value.
    private static func appendObject(_ values: [NamedValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, item) in values.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendQuoted(item.name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.appendQuoted(item.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
