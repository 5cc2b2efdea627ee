import DeepLinks

extension [NamedValue] {
    /// The value of the first entry called `name` (how `{{placeholders}}` find their value).
    @inline(__always)
    func value(named name: String) -> String? {
        for v in self where v.name == name { return v.value }
        return nil
    }
}
