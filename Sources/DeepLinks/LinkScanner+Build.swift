import StrictJSON

/// Route matching, the route's query rules, and the canonical form.
extension LinkScanner {
    func matchAndBuild() throws(LinkRejection) -> CanonicalLink {
        let path = DecodedSegments(bytes: UnsafeBufferPointer(decoded), ends: UnsafeBufferPointer(segmentEnds),
                                   count: segmentCount)
        guard let routeIndex = table.matcher.match(path) else { throw explainNoMatch(path) }
        let route = table.compiledRoutes[routeIndex]

        // Every item must be declared by the route or passed through, with a valid value;
        // its slot (canonical position) replaces the redundant value start.
        for i in 0..<itemCount {
            let key = itemKey(i), value = itemValue(i)
            guard let slot = route.slot(for: key) else {
                throw reject(.unknownQueryParameter, "query key \(quoted(key)) is not declared by route \(JSONWriter.quoted(route.route.name)) nor passed through")
            }
            let type = route.slotTypes[slot]
            guard type.accepts(safeBytes: value) else {
                throw reject(.invalidParameter, "query value \(quoted(value)) for \(quoted(key)) must be \(type.requirement)")
            }
            itemBounds[4 * i + 2] = slot
        }
        for slot in route.requiredSlots where item(inSlot: slot) == nil {
            throw reject(.invalidParameter, "route \(JSONWriter.quoted(route.route.name)) requires query key \(JSONWriter.quoted(route.slotNames[slot]))")
        }
        return try build(route, path: path)
    }

    func item(inSlot slot: Int) -> Int? {
        for i in 0..<itemCount where itemBounds[4 * i + 2] == slot { return i }
        return nil
    }

    /// If some route fits the path's shape but a parameter has the wrong type, say which.
    func explainNoMatch(_ path: DecodedSegments) -> LinkRejection {
        if let near = table.matcher.match(path, ignoringTypes: true) {
            let route = table.routes[near]
            for (k, segment) in route.segments.enumerated() {
                guard case .parameter(let name, let type) = segment, !type.accepts(safeBytes: path.segment(k)) else { continue }
                return reject(.invalidParameter, "path segment \(k + 1) \(quoted(path.segment(k))) is not a valid :\(name) for route \(JSONWriter.quoted(route.name)) (\(route.pattern)): it must be \(type.requirement)")
            }
        }
        var shown = ""
        for k in 0..<path.count { shown += "/" + path.string(k) }
        return reject(.noMatchingRoute, "no route matches the path \(JSONWriter.quoted(shown.isEmpty ? "/" : shown))")
    }

    func build(_ route: CompiledRoute, path: DecodedSegments) throws(LinkRejection) -> CanonicalLink {
        let host = table.hostBytes[0]
        // Worst case: every decoded byte becomes %XX, plus separators.
        let capacity = 8 + host.count + 3 * decodedCount + segmentCount + 2 * itemCount + 2
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer throws(LinkRejection) in
            var out = CanonicalWriter(buffer)
            out.append("https://")
            out.append(host)
            var params: [NamedValue] = []
            if route.parameterCount > 0 { params.reserveCapacity(route.parameterCount) }
            PercentCoding.pathSafe.withUnsafeBufferPointer { safe in
                route.segmentKinds.withUnsafeBufferPointer { kinds in
                    for k in 0..<kinds.count {
                        let kind = kinds[k]
                        if kind == .wildcard {
                            for rest in k..<path.count {
                                out.append(UInt8(ascii: "/"))
                                PercentCoding.encode(path.segment(rest), safe: safe, into: &out)
                            }
                            params.append(NamedValue(name: Route.wildcardParameterName, value: path.rest(from: k)))
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
                        PercentCoding.encode(value, safe: safe, lowercasing: lowercased, into: &out)
                        params.append(NamedValue(name: route.parameterNames[k],
                                                 value: canonicalValue(value, lowercased: lowercased, written: out, from: start)))
                    }
                }
            }
            if route.segmentKinds.isEmpty { out.append(UInt8(ascii: "/")) }
            var query: [NamedValue] = []
            if itemCount > 0 {
                query.reserveCapacity(itemCount)
                PercentCoding.querySafe.withUnsafeBufferPointer { safe in
                    for slot in 0..<route.slotKeys.count {
                        guard let i = item(inSlot: slot) else { continue }
                        out.append(query.isEmpty ? UInt8(ascii: "?") : UInt8(ascii: "&"))
                        out.append(route.slotKeys[slot])
                        out.append(UInt8(ascii: "="))
                        let start = out.count
                        let lowercased = route.slotLowercased[slot]
                        PercentCoding.encode(itemValue(i), safe: safe, lowercasing: lowercased, into: &out)
                        query.append(NamedValue(name: route.slotNames[slot],
                                                value: canonicalValue(itemValue(i), lowercased: lowercased, written: out, from: start)))
                    }
                }
            }
            if out.count > LinkLimits.maxBytes || out.overflowed {
                throw reject(.tooLong, "the canonical form would be \(out.count) bytes; the limit is \(LinkLimits.maxBytes)")
            }
            let canonical = String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<out.count]), as: UTF8.self)
            return CanonicalLink(canonical: canonical, route: route.route.name, params: params, query: query)
        }
    }

    /// A decoded value as the result reports it; a uuid is taken from the lowercase text
    /// just written (it never needs percent-encoding).
    @inline(__always)
    func canonicalValue(_ bytes: UnsafeBufferPointer<UInt8>, lowercased: Bool, written out: CanonicalWriter,
                                from start: Int) -> String {
        if lowercased {
            return String(decoding: UnsafeBufferPointer(rebasing: out.buffer[start..<out.count]), as: UTF8.self)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
