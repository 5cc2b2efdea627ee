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
        var out = lead.count + 2 > column ? lead + "\n" + indent : lead + String(repeating: " ", count: column - lead.count)
        var lineLength = 0
        for word in description.split(separator: " ", omittingEmptySubsequences: false) {
            if lineLength > 0, lineLength + 1 + word.count > width - column {
                out += "\n" + indent
                lineLength = 0
            } else if lineLength > 0 {
                out += " "
                lineLength += 1
            }
            out += word
            lineLength += word.count
        }
        return out + "\n"
    }

    /// A paragraph wrapped at `width`.
    static func wrapped(_ text: String) -> String {
        var out = ""
        var lineLength = 0
        for word in text.split(separator: " ") {
            if lineLength > 0, lineLength + 1 + word.count > width {
                out += "\n"
                lineLength = 0
            } else if lineLength > 0 {
                out += " "
                lineLength += 1
            }
            out += word
            lineLength += word.count
        }
        return out
    }

    /// "check deep links" → "Check deep links."
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
    }
}
