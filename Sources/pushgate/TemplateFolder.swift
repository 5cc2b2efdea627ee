#if canImport(Glibc)
import Glibc
#endif
import Payloads
import StrictJSON

/// Templates read on demand from `<folder>/<name>.json` (names are checked to be plain
/// file names before they get here, so they cannot leave the folder). No folder: no
/// templates.
struct TemplateFolder: TemplateStore {
    let path: String?

    func lookup(_ name: String) -> TemplateLookup {
        guard let path else { return .notFound }
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

    /// The `.json` files whose names are template names (anything else in the folder is not one).
    func names() -> [String] {
        guard let path, let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var files: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            files.append(name)
        }
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(TemplateName.isValid).sorted()
    }
}
