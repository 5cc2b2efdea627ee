extension JSONWriter {
    /// The value as indented JSON for people to read and diff (generated files): members
    /// in stored order, two spaces per level, a newline at the end, strings escaped exactly
    /// as the compact writer escapes them. Empty arrays and objects stay on one line.
    public static func pretty(_ json: JSON) -> String {
        var out: [UInt8] = []
        appendPretty(json, indent: 0, to: &out)
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendPretty(_ json: JSON, indent: Int, to out: inout [UInt8]) {
        func newline(_ level: Int) {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 2))
        }
        switch json {
        case .array(let items) where !items.isEmpty:
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                appendPretty(item, indent: indent + 1, to: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                appendQuoted(member.key, to: &out)
                out.append(contentsOf: ": ".utf8)
                appendPretty(member.value, indent: indent + 1, to: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        default:
            var writer = JSONWriter()
            writer.value(json)
            out.append(contentsOf: writer.bytes)
        }
    }
}
