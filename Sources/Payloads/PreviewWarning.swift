import StrictJSON

/// Something a preview tells the person writing a campaign, in words: the campaign is
/// valid and would be sent, but a phone would not show what they may expect.
public struct PreviewWarning: Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable {
        /// A text of the template has no translation in the requested locale (nor in a
        /// less specific one, nor is the default strings' `default_locale` one of them):
        /// the template's default text is sent instead.
        case missingTranslation
        /// A text takes more lines than the lock screen, banners and Notification Center show.
        case cutOnScreen
        /// The alert body was shortened to fit the payload limit (`"truncate": true`).
        case bodyShortened
    }

    public var code: Code
    /// `title`, `subtitle` or `body`, when the warning is about one text.
    public var field: String?
    public var message: String

    static func warnings(plan: CampaignPlan, texts: [CampaignPreview.ShownText], bodyShortened: Bool) -> [PreviewWarning] {
        var out: [PreviewWarning] = []
        if let template = plan.template, case .template(_, let locale?) = plan.campaign.message, !template.defaultStringsServe(locale) {
            let language = template.defaultLocale.map { " (\(TextSafety.quoted($0)))" } ?? ""
            for shown in texts where shown.fromDefaultStrings {
                out.append(PreviewWarning(code: .missingTranslation, field: shown.field.rawValue,
                    message: "the \(shown.field.rawValue) has no \(TextSafety.quoted(locale)) translation in template "
                        + "\(TextSafety.quoted(template.name)): its default text\(language) is sent instead"))
            }
        }
        for shown in texts where shown.layout.truncated {
            let lines = shown.layout.maxLines == 1 ? "one line" : "\(shown.layout.maxLines) lines"
            out.append(PreviewWarning(code: .cutOnScreen, field: shown.field.rawValue,
                message: "the \(shown.field.rawValue) takes about \(shown.layout.totalLines) lines; the lock screen, banners and "
                    + "Notification Center show \(lines) and cut the rest with \"…\" (the whole text shows when the notification is expanded)"))
        }
        if bodyShortened {
            out.append(PreviewWarning(code: .bodyShortened, field: "body",
                message: "the body was shortened to fit the \(plan.payloadLimit)-byte limit for \(plan.pushType.rawValue) pushes (\"truncate\": true)"))
        }
        return out
    }

    func write(to w: inout JSONWriter) {
        w.object { w in
            w.member("code", code.rawValue)
            w.member("field", orNull: field)
            w.member("message", message)
        }
    }
}
