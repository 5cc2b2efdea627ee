import HTTPServer
import Payloads
import StrictJSON

/// `GET /v1/apps/{app}/templates` (`/v1/templates` for the only app): what a person composing a campaign chooses from — each template's
/// description, push type, locales, link pattern, and placeholders with their descriptions.
/// A template file that does not parse is listed under `invalid` with its problems.
enum TemplateEndpoints {
    static func register(in builder: inout APIRouterBuilder, apps: AppDirectory) {
        builder.addPerApp("GET", "/templates", operation: "templates.list", apps: apps) { _, _, app in
            let templates = app.planner.templates
            var valid: [Template] = []
            var invalid: [(name: String, problems: [PayloadError])] = []
            for name in templates.names() {
                switch templates.lookup(name) {
                case .found(let t): valid.append(t)
                case .invalid(let problems): invalid.append((name, problems))
                case .notFound: continue  // removed since it was listed
                }
            }
            var w = JSONWriter(capacity: 1024)
            w.object { w in
                w.member("templates", array: { w in
                    for t in valid { write(t, to: &w) }
                })
                w.member("invalid", array: { w in
                    for entry in invalid {
                        w.object { w in
                            w.member("name", entry.name)
                            w.member("problems", array: { w in
                                for p in entry.problems {
                                    w.object { w in
                                        w.member("code", p.stableCode)
                                        w.member("pointer", p.path.pointer)
                                        w.member("message", p.message)
                                    }
                                }
                            })
                        }
                    }
                })
            }
            w.raw("\n")
            return jsonResponse(w.bytes)
        }
    }

    static func write(_ t: Template, to w: inout JSONWriter) {
        w.object { w in
            w.member("name", t.name)
            w.member("description", orNull: t.description)
            w.member("default_locale", orNull: t.defaultLocale)
            w.member("push_type", (t.defaults.pushType ?? .alert).rawValue)
            w.member("thread_id", orNull: t.defaults.threadId)
            w.member("category", orNull: t.defaults.category)
            w.member("interruption_level", orNull: t.defaults.interruptionLevel?.rawValue)
            w.member("locales", array: { w in
                for tag in t.localeTags { w.string(tag) }
            })
            w.member("deeplink", orNull: t.deeplink?.text.written)
            w.member("variables", array: { w in
                for v in t.variables {
                    w.object { w in
                        w.member("name", v.name)
                        w.member("description", orNull: v.description)
                    }
                }
            })
        }
    }
}
