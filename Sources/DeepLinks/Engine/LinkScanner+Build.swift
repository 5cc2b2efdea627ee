import StrictJSON

/// Route matching, the route's query rules, and the canonical form.
extension LinkScanner {
    func matchAndBuild<R>(_ consume: (AcceptedLinkView) -> R) throws(LinkRejection) -> R {
        let path = DecodedSegments(bytes: UnsafeBufferPointer(decoded), ends: UnsafeBufferPointer(segmentEnds),
                                   count: segmentCount)
        guard let routeIndex = tables.pointee.trie.match(path) else { throw explainNoMatch(path) }
        let route = tables.pointee.routes[routeIndex]

        // Every item must be declared by the route or passed through, with a valid value;
        // its slot (canonical position) replaces the redundant value start.
        for i in 0..<itemCount {
            let key = itemKey(i), value = itemValue(i)
            guard let slot = route.slot(for: key) else {
                throw reject(.unknownQueryParameter, "query key \(quoted(key)) is not declared by route \(TextSafety.quoted(table.routes[routeIndex].name)) nor passed through")
            }
            guard route.slotChecks[slot].accepts(safeBytes: value) else {
                throw reject(.invalidParameter, "query value \(quoted(value)) for \(quoted(key)) must be \(table.compiledRoutes[routeIndex].slotTypes[slot].requirement)")
            }
            itemBounds[4 * i + 2] = UInt16(truncatingIfNeeded: slot)
        }
        for slot in route.requiredSlots where item(inSlot: slot) == nil {
            throw reject(.invalidParameter, "route \(TextSafety.quoted(table.routes[routeIndex].name)) requires query key \(TextSafety.quoted(table.compiledRoutes[routeIndex].slotNames[slot]))")
        }
        return try build(route, path: path, consume)
    }

    func item(inSlot slot: Int) -> Int? {
        for i in 0..<itemCount where Int(itemBounds[4 * i + 2]) == slot { return i }
        return nil
    }

    /// If some route fits the path's shape but a parameter has the wrong type, say which.
    func explainNoMatch(_ path: DecodedSegments) -> LinkRejection {
        if let near = tables.pointee.trie.match(path, ignoringTypes: true) {
            let route = table.routes[near]
            for (k, segment) in route.segments.enumerated() {
                guard case .parameter(let name, let type) = segment, !type.accepts(safeBytes: path.segment(k)) else { continue }
                return reject(.invalidParameter, "path segment \(k + 1) \(quoted(path.segment(k))) is not a valid :\(name) for route \(TextSafety.quoted(route.name)) (\(route.pattern)): it must be \(type.requirement)")
            }
        }
        var shown: [UInt8] = []
        for k in 0..<path.count {
            shown.append(UInt8(ascii: "/"))
            shown.append(contentsOf: path.segment(k))
        }
        if shown.isEmpty { shown = [UInt8(ascii: "/")] }
        return shown.withUnsafeBufferPointer { reject(.noMatchingRoute, "no route matches the path \(quoted($0))") }
    }

    /// Writes the canonical form into stack memory and hands `consume` a view of it and
    /// of every value the result reports, all still in stack memory: the caller turns it
    /// into strings (`CanonicalLink`) or writes it out directly (JSON Lines).
    func build<R>(_ route: CompiledRoute.Layout, path: DecodedSegments,
                  _ consume: (AcceptedLinkView) -> R) throws(LinkRejection) -> R {
        let host = tables.pointee.hosts[0]
        // Worst case: every decoded byte becomes %XX, plus separators; then room for a `*`
        // value (the rest of the path joined with '/').
        let capacity = 8 + host.count + 3 * decodedCount + segmentCount + 2 * itemCount + 2
        let joinCapacity = decodedCount + segmentCount
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity + joinCapacity) { buffer throws(LinkRejection) in
            try withUnsafeTemporaryAllocation(of: UnsafeBufferPointer<UInt8>.self,
                                              capacity: route.segmentKinds.count + itemCount + 1) { values throws(LinkRejection) in
                try withUnsafeTemporaryAllocation(of: Int.self, capacity: route.segmentKinds.count + itemCount + 1) { names throws(LinkRejection) in
                    var out = CanonicalWriter(UnsafeMutableBufferPointer(rebasing: buffer[0..<capacity]))
                    var recorded = RecordedValues(values: values, names: names)
                    out.append("https://")
                    out.append(host)
                    let pathSafe = tables.pointee.pathSafe, kinds = route.segmentKinds
                    for k in 0..<kinds.count {
                        let kind = kinds[k]
                        if kind == .wildcard {
                            var joined = capacity
                            for rest in k..<path.count {
                                out.append(UInt8(ascii: "/"))
                                PercentCoding.encode(path.segment(rest), safe: pathSafe, into: &out)
                                if rest > k { buffer[joined] = UInt8(ascii: "/"); joined += 1 }
                                for c in path.segment(rest) { buffer[joined] = c; joined += 1 }
                            }
                            recorded.add(UnsafeBufferPointer(rebasing: buffer[capacity..<joined]), name: k)
                            break
                        }
                        out.append(UInt8(ascii: "/"))
                        let value = path.segment(k)
                        if kind == .literal {
                            out.append(value)
                            continue
                        }
                        let start = out.count
                        let lowercased = kind == .lowercasedParameter
                        PercentCoding.encode(value, safe: pathSafe, lowercasing: lowercased, into: &out)
                        recorded.add(canonicalValue(value, lowercased: lowercased, written: out, from: start), name: k)
                    }
                    if route.segmentKinds.isEmpty { out.append(UInt8(ascii: "/")) }
                    let parameterCount = recorded.count
                    if itemCount > 0 {
                        let querySafe = tables.pointee.querySafe
                        for slot in 0..<route.slotKeys.count {
                            guard let i = item(inSlot: slot) else { continue }
                            out.append(recorded.count == parameterCount ? UInt8(ascii: "?") : UInt8(ascii: "&"))
                            out.append(route.slotKeys[slot])
                            out.append(UInt8(ascii: "="))
                            let start = out.count
                            let lowercased = route.slotLowercased[slot]
                            PercentCoding.encode(itemValue(i), safe: querySafe, lowercasing: lowercased, into: &out)
                            recorded.add(canonicalValue(itemValue(i), lowercased: lowercased, written: out, from: start), name: slot)
                        }
                    }
                    if out.count > LinkLimits.maxBytes || out.overflowed {
                        throw reject(.tooLong, "the canonical form would be \(out.count) bytes; the limit is \(LinkLimits.maxBytes)")
                    }
                    return consume(AcceptedLinkView(
                        canonical: UnsafeBufferPointer(rebasing: buffer[0..<out.count]), owner: owner, routeIndex: route.index,
                        values: UnsafeBufferPointer(rebasing: values[0..<recorded.count]),
                        names: UnsafeBufferPointer(rebasing: names[0..<recorded.count]), parameterCount: parameterCount))
                }
            }
        }
    }

    /// A decoded value as the result reports it; a uuid is taken from the lowercase text
    /// just written (it never needs percent-encoding).
    @inline(__always)
    func canonicalValue(_ bytes: UnsafeBufferPointer<UInt8>, lowercased: Bool, written out: CanonicalWriter,
                        from start: Int) -> UnsafeBufferPointer<UInt8> {
        lowercased ? UnsafeBufferPointer(rebasing: out.buffer[start..<min(out.count, out.buffer.count)]) : bytes
    }
}

/// The values a result reports, recorded in order as the canonical form is written.
struct RecordedValues {
    let values: UnsafeMutableBufferPointer<UnsafeBufferPointer<UInt8>>
    let names: UnsafeMutableBufferPointer<Int>
    var count = 0

    @inline(__always)
    mutating func add(_ value: UnsafeBufferPointer<UInt8>, name: Int) {
        values[count] = value
        names[count] = name
        count += 1
    }
}

/// An accepted link as the scanner leaves it, in stack memory valid only during the call
/// that receives it: the canonical bytes, and each reported value (route parameters in
/// pattern order, then query items in canonical order) with the index of its name.
struct AcceptedLinkView {
    let canonical: UnsafeBufferPointer<UInt8>
    /// The scan's table, which outlives the view (read only to build `link`).
    let owner: Unmanaged<CompiledRouteTable>
    let routeIndex: Int
    let values: UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>
    /// For a parameter, its segment index (`route.parameterNames`); for a query item, its
    /// slot (`route.slotNames`).
    let names: UnsafeBufferPointer<Int>
    let parameterCount: Int

    var route: CompiledRoute { owner.takeUnretainedValue().compiledRoutes[routeIndex] }
    var routeName: String { route.route.name }
    /// The index of parameter `i`'s name in `route.parameterNames`, of query item `i`'s in `route.slotNames`.
    func parameterNameIndex(_ i: Int) -> Int { names[i] }
    func queryNameIndex(_ i: Int) -> Int { names[parameterCount + i] }
    var queryCount: Int { values.count - parameterCount }
    func parameterName(_ i: Int) -> String { route.parameterNames[names[i]] }
    func queryName(_ i: Int) -> String { route.slotNames[names[parameterCount + i]] }
    func parameterValue(_ i: Int) -> UnsafeBufferPointer<UInt8> { values[i] }
    func queryValue(_ i: Int) -> UnsafeBufferPointer<UInt8> { values[parameterCount + i] }

    /// The result as values of its own.
    var link: CanonicalLink {
        CanonicalLink(canonical: String(decoding: canonical, as: UTF8.self), route: routeName,
                      params: (0..<parameterCount).map { NamedValue(name: parameterName($0), value: String(decoding: parameterValue($0), as: UTF8.self)) },
                      query: (0..<queryCount).map { NamedValue(name: queryName($0), value: String(decoding: queryValue($0), as: UTF8.self)) })
    }
}
