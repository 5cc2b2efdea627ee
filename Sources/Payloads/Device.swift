import DeepLinks

/// One recipient: a normalised token and the variables that personalise its message.
public struct Device: Sendable, Equatable {
    /// Lowercase hex.
    public var token: String
    /// Per-device values for `{{placeholders}}`; they win over the campaign's.
    public var variables: [NamedValue]

    /// Builds a device from an already normalised token (see `DeviceToken.normalize`).
    public init(token: String, variables: [NamedValue] = []) {
        self.token = token
        self.variables = variables
    }

    /// A device from text as people paste it, or why the text is not a token.
    public static func parse(_ text: String, variables: [NamedValue] = []) -> Result<Device, ValueProblem> {
        DeviceToken.normalize(text).map { Device(token: $0, variables: variables) }
    }

    @inline(__always)
    func variable(_ name: String) -> String? {
        variables.value(named: name)
    }
}
