/// How iOS lays out a notification's text on the lock screen, in a banner and in
/// Notification Center (the three share one layout on an iPhone in portrait): the title
/// and the subtitle on one line each, the body on at most four, each line ended by the
/// width of the text column, the last visible line ending in "…" when there is more.
///
/// This is an approximation, not iOS: widths come from a table of typical SF Pro Text
/// advances at 15 pt (narrow, normal, wide letters, digits, CJK, emoji) on a 390-point
/// wide phone, and lines break at spaces (a word longer than a line breaks anywhere).
/// What it gets right is the shape: which text is cut, and roughly where. The preview
/// answer and the `/ui` page both show these lines, so the page computes nothing itself.
public enum NotificationDisplay {
    /// The places this layout stands for, as the preview answer names them.
    public static let places = ["lockScreen", "banner", "notificationCenter"]

    public enum Field: String, Sendable, CaseIterable {
        case title, subtitle, body

        /// Lines iOS shows before cutting (the expanded notification shows everything).
        public var maxLines: Int {
            switch self {
            case .title, .subtitle: return 1
            case .body: return 4
            }
        }

        /// The text column in points: the title shares its line with the time ("now").
        var width: Double {
            switch self {
            case .title: return 250
            case .subtitle, .body: return 290
            }
        }

        /// The title and the subtitle are semibold, a little wider than regular text.
        var weight: Double { self == .body ? 1.0 : 1.06 }
    }

    /// One text as it would be shown.
    public struct Layout: Sendable, Equatable {
        /// The visible lines; when `truncated`, the last one ends in "…".
        public var lines: [String]
        /// How many lines the whole text takes.
        public var totalLines: Int
        public var maxLines: Int
        public var truncated: Bool { totalLines > maxLines }
    }

    public static let ellipsis: Character = "…"

    public static func layout(_ text: String, as field: Field) -> Layout {
        let width = field.width / field.weight
        let all = wrap(text, width: width)
        guard all.count > field.maxLines else {
            return Layout(lines: all, totalLines: all.count, maxLines: field.maxLines)
        }
        var visible = Array(all.prefix(field.maxLines))
        var last = visible[visible.count - 1]
        while !last.isEmpty && advance(of: last) + advance(of: ellipsis) > width { last.removeLast() }
        while let end = last.last, isSpace(end) { last.removeLast() }
        visible[visible.count - 1] = last + String(ellipsis)
        return Layout(lines: visible, totalLines: all.count, maxLines: field.maxLines)
    }

    /// Breaks `text` into lines of at most `width` points: at line breaks (LF, CR LF,
    /// U+2028, U+2029), else at the last space that fits, else inside a word.
    static func wrap(_ text: String, width: Double) -> [String] {
        var lines: [String] = []
        for paragraph in paragraphs(text) {
            var line = ""
            var lineWidth = 0.0
            for word in words(paragraph) {
                let trimmed = word.reversed().drop(while: isSpace).reversed()
                let wordWidth = advance(of: trimmed)
                if lineWidth + wordWidth <= width {
                    line += word
                    lineWidth += advance(of: word)
                    continue
                }
                if !line.isEmpty {
                    lines.append(trimmingTrailingSpaces(line))
                    line = ""
                    lineWidth = 0
                }
                // A word wider than the line is broken at characters.
                for character in word {
                    let w = advance(of: character)
                    if lineWidth + w > width && !line.isEmpty && !isSpace(character) {
                        lines.append(trimmingTrailingSpaces(line))
                        line = ""
                        lineWidth = 0
                    }
                    line.append(character)
                    lineWidth += w
                }
            }
            lines.append(trimmingTrailingSpaces(line))
        }
        return lines
    }

    static func paragraphs(_ text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false) { c in
            c == "\n" || c == "\r\n" || c == "\r" || c == "\u{2028}" || c == "\u{2029}"
        }
    }

    /// Words with the spaces that follow them.
    static func words(_ paragraph: Substring) -> [Substring] {
        var out: [Substring] = []
        var start = paragraph.startIndex
        var previousWasSpace = false
        for index in paragraph.indices {
            let space = isSpace(paragraph[index])
            if !space && previousWasSpace {
                out.append(paragraph[start..<index])
                start = index
            }
            previousWasSpace = space
        }
        if start < paragraph.endIndex { out.append(paragraph[start...]) }
        return out
    }

    static func isSpace(_ c: Character) -> Bool {
        c == " " || c == "\t" || c == "\u{00A0}" || c == "\u{3000}"
    }

    static func trimmingTrailingSpaces(_ s: String) -> String {
        var s = s
        while let last = s.last, isSpace(last) { s.removeLast() }
        return s
    }

    static func advance<S: Sequence>(of text: S) -> Double where S.Element == Character {
        text.reduce(0) { $0 + advance(of: $1) }
    }

    /// Typical advance of one character, in points, SF Pro Text 15 pt regular.
    static func advance(of c: Character) -> Double {
        guard let first = c.unicodeScalars.first else { return 0 }
        if c.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }) { return 19 }
        switch first.properties.generalCategory {
        case .format, .control, .nonspacingMark, .enclosingMark, .lineSeparator, .paragraphSeparator: return 0
        default: break
        }
        if isWide(first.value) { return 15 }
        if first.isASCII {
            let ascii = UInt8(first.value)
            switch ascii {
            case 0x20: return 4.2
            case UInt8(ascii: "i"), UInt8(ascii: "l"), UInt8(ascii: "j"), UInt8(ascii: "."), UInt8(ascii: ","),
                 UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "'"), UInt8(ascii: "|"), UInt8(ascii: "!"): return 4
            case UInt8(ascii: "f"), UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "I"), UInt8(ascii: "("),
                 UInt8(ascii: ")"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "-"), UInt8(ascii: "\""): return 5.6
            case UInt8(ascii: "m"), UInt8(ascii: "w"): return 12.6
            case UInt8(ascii: "M"), UInt8(ascii: "W"), UInt8(ascii: "@"): return 14.2
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return 9.2
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return 10.4
            default: return 8.3
            }
        }
        return first.properties.isUppercase ? 10.4 : 8.6
    }

    /// East Asian wide and full-width ranges (Hangul, CJK, kana, full-width forms).
    static func isWide(_ v: UInt32) -> Bool {
        (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
            || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
    }
}
