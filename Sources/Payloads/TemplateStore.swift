/// Where the planner finds templates by name: the CLI reads `Templates/<name>.json` on
/// demand; the service and the tests keep them in memory (`TemplateLibrary`).
public protocol TemplateStore: Sendable {
    func lookup(_ name: String) -> TemplateLookup
    /// Every template's name, sorted (what `GET /v1/templates` lists).
    func names() -> [String]
}

public enum TemplateLookup: Sendable {
    case found(Template)
    case notFound
    /// The template exists but is broken; problems carry paths inside the template file.
    case invalid([PayloadError])
}

/// Templates held in memory, by name.
public struct TemplateLibrary: TemplateStore {
    public var templates: [String: Template]

    public init(_ templates: [Template] = []) {
        var byName: [String: Template] = [:]
        for t in templates { byName[t.name] = t }
        self.templates = byName
    }

    public func lookup(_ name: String) -> TemplateLookup {
        templates[name].map(TemplateLookup.found) ?? .notFound
    }

    public func names() -> [String] { templates.keys.sorted() }
}
