import StrictJSON

/// Shortens an alert body so the payload fits: cut at a character (grapheme) boundary,
/// preferably a word boundary, and end in "…". Sizes are the bytes the text takes once
/// JSON-escaped, because that is what the limit is measured on.
enum Truncation {
    static let ellipsis = "…"
    static let ellipsisBytes = 3
    /// A word boundary is preferred unless it would drop more than this many characters
    /// compared with cutting mid-word (one very long word should not empty the body).
    static let maxCharactersLostForWordBoundary = 24

    /// The longest shortened form of `text` whose escaped size is at most `budget`
    /// bytes, or nil when not even "…" fits.
    static func shorten(_ text: String, toEscapedBytes budget: Int) -> String? {
        let prefixBudget = budget - ellipsisBytes
        guard prefixBudget >= 0 else { return nil }
        var used = 0
        var scratch: [UInt8] = []
        var cut = text.startIndex           // end of the longest fitting prefix
        var characters = 0
        var wordCut: String.Index?          // end of the last word before whitespace
        var charactersAtWordCut = 0
        var previousWasSpace = false
        for index in text.indices {
            let character = text[index]
            scratch.removeAll(keepingCapacity: true)
            JSONWriter.appendEscaped(String(character), to: &scratch)
            guard used + scratch.count <= prefixBudget else { break }
            let isSpace = character.unicodeScalars.allSatisfy(TextSafety.isWhitespace)
            if isSpace && !previousWasSpace && index > text.startIndex {
                wordCut = index
                charactersAtWordCut = characters
            }
            previousWasSpace = isSpace
            used += scratch.count
            characters += 1
            cut = text.index(after: index)
        }
        var end = cut
        if cut < text.endIndex, let w = wordCut, characters - charactersAtWordCut <= maxCharactersLostForWordBoundary,
           !text[cut].unicodeScalars.allSatisfy(TextSafety.isWhitespace) {
            end = w
        }
        var prefix = text[..<end]
        while let last = prefix.last, last.unicodeScalars.allSatisfy(TextSafety.isWhitespace) { prefix = prefix.dropLast() }
        return String(prefix) + ellipsis
    }
}
