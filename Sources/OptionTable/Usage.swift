/// The usage text of a command, generated from its declaration: the forms, the summary,
/// each positional and each option with its one-line description.
public enum Usage {
    /// Column where descriptions start, and the width they wrap at.
    static let column = 26
    static let width = 80

    public static func text(for declaration: CommandDeclaration) -> String {
        let forms = declaration.forms.isEmpty ? ["[options]"] : declaration.forms
        var out = ""
        for (i, form) in forms.enumerated() {
            out += (i == 0 ? "usage: " : "       ") + declaration.invocation + " " + form + "\n"
        }
        out += "\n" + wrapped(sentence(declaration.summary)) + "\n"
        if !declaration.positionals.isEmpty {
            out += "\narguments:\n"
            for positional in declaration.positionals { out += row(positional.name, positional.help) }
        }
        out += "\noptions:\n"
        for option in declaration.allOptions {
            let shown = (option.short.map { "-\($0), " } ?? "") + option.syntax
            out += row(shown, option.help + (option.repeatable ? " (may be repeated)" : ""))
        }
        if !declaration.notes.isEmpty {
            out += "\n" + declaration.notes.map(wrapped).joined(separator: "\n") + "\n"
        }
        return out
    }

    /// The list of a command group: its subcommands and their summaries.
    public static func groupText(invocation: String, summary: String, subcommands: [(name: String, summary: String)],
                                 footer: String) -> String {
        var out = "usage: \(invocation) <command> [options]\n\n\(wrapped(sentence(summary)))\n\ncommands:\n"
        for sub in subcommands { out += row(sub.name, sub.summary) }
        return out + "\n" + footer + "\n"
    }

    /// `  NAME                    description`, the description wrapped at `width` and on
    /// the next line when the name is too wide.
    public static func row(_ name: String, _ description: String) -> String {
        let lead = "  " + name
        let indent = String(repeating: " ", count: column)
        let first = lead.count + 2 > column ? lead + "\n" + indent : lead + String(repeating: " ", count: column - lead.count)
        return first + lines(description, width: width - column).joined(separator: "\n" + indent) + "\n"
    }

    /// A paragraph wrapped at `width`.
    static func wrapped(_ text: String) -> String {
        lines(text, width: width).joined(separator: "\n")
    }

    /// The words of `text` in lines of at most `width` characters (a longer word gets a line
    /// of its own).
    static func lines(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }

    /// "check deep links" → "Check deep links."
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
    }
}
