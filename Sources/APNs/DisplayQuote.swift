import StrictJSON

/// Quotes text from configuration, the environment or a file name for a message:
/// control and bidi characters escaped, in double quotes.
enum DisplayQuote {
    static func quoted(_ text: String) -> String {
        "\"" + TextSafety.escapedForDisplay(text) + "\""
    }
}
