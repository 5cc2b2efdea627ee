import StrictJSON

extension DiagnosticCode {
    /// A campaign to more devices than `guard.confirmAbove` without `confirm_devices` equal
    /// to its device count (or with a different number).
    public static let confirmationRequired = DiagnosticCode(rawValue: "confirmationRequired")
}

/// The guard against sending to everyone by mistake: a campaign to more devices than
/// `confirmAbove` goes out only when it says how many devices it is for
/// (`confirm_devices`), and that number is its device count. A confirmation that is given
/// must be right whatever the size: a wrong number is a sign of the wrong list.
public struct SendGuard: Sendable, Equatable {
    /// The shipped `guard.confirmAbove`.
    public static let defaultConfirmAbove = 10_000
    public var confirmAbove: Int

    public init(confirmAbove: Int = SendGuard.defaultConfirmAbove) {
        self.confirmAbove = confirmAbove
    }

    /// Whether a campaign of `devices` may go out with `confirmed`; why not, naming both numbers.
    public func problem(devices: Int, confirmed: Int?, at location: DiagnosticLocation) -> Diagnostic? {
        if let confirmed {
            guard confirmed != devices else { return nil }
            return Diagnostic(.confirmationRequired, at: location,
                              "confirm_devices is \(confirmed) but the campaign has \(devices) devices; nothing was sent")
        }
        guard devices > confirmAbove else { return nil }
        return Diagnostic(.confirmationRequired, at: location,
                          "the campaign has \(devices) devices, more than guard.confirmAbove (\(confirmAbove)): "
                          + "to send it, add \"confirm_devices\": \(devices)")
    }
}
