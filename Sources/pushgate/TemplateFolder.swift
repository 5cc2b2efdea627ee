import Payloads
import StrictJSON

/// Templates read on demand from `<folder>/<name>.json` (names are checked to be plain
/// file names before they get here, so they cannot leave the folder).
struct TemplateFolder: TemplateStore {
    let path: String

    func lookup(_ name: String) -> TemplateLookup {
        let file = GatewayConfig.resolve(name + ".json", in: path)
        switch readSmallFile(path: file, limit: 1 << 20) {
        case .failure:
            return .notFound
        case .success(let bytes):
            switch Template.parse(jsonBytes: bytes, name: name) {
            case .success(let template): return .found(template)
            case .failure(let rejection): return .invalid(rejection.problems)
            }
        }
    }
}
