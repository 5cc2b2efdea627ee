import StrictJSON

/// Quotes text from configuration or the environment for a message: escaped, in quotes.
enum JSONQuote {
    static func quoted(_ text: String) -> String {
        "\"" + TextSafety.escapedForDisplay(text) + "\""
    }
}
