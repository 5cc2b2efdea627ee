/// Who a request is from. Without a trusted proxy in front, the TCP peer; behind one,
/// what the proxies' forwarding headers say.
public struct ClientAddress: Sendable, Equatable {
    /// The client: an address (`192.0.2.1`, `2001:db8::1`), or `unknown` / an
    /// `_obfuscated` identifier when a trusted proxy named it so.
    public var client: String
    /// The TCP peer (the proxy, behind one).
    public var peer: String
    /// The key for per-client limits (failed authentication): the client's address, or
    /// the peer's when the client has none, so clients a proxy does not identify share
    /// the proxy's one bucket rather than each getting a fresh one.
    public var limitKey: String

    public init(client: String, peer: String, limitKey: String) {
        self.client = client
        self.peer = peer
        self.limitKey = limitKey
    }

    /// A request from the peer itself.
    public init(peer: String) {
        self.init(client: peer, peer: peer, limitKey: peer)
    }
}

/// `server.trustedProxies`: the addresses and ranges whose forwarding headers are
/// believed. A request's client is the rightmost hop that is not itself a trusted proxy;
/// from any other peer the headers are not read at all.
public struct TrustedProxies: Sendable, Equatable {
    public let ranges: [IPAddressRange]

    public init(_ ranges: [IPAddressRange] = []) {
        self.ranges = ranges
    }

    public static let none = TrustedProxies()

    public var isEmpty: Bool { ranges.isEmpty }

    public func trusts(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client of a request from `peer` with these headers (names lowercased).
    ///
    /// When both `Forwarded` and `X-Forwarded-For` are present they must name the same
    /// hops (ports aside), or the request is refused: a proxy that writes one of them
    /// passes the other through from the client unchanged, so a disagreement means one
    /// of them is the client's own, and which one cannot be known here.
    public func client(peer: String, headers: [(name: String, value: String)]) -> Result<ClientAddress, ForwardingProblem> {
        guard !ranges.isEmpty, let peerAddress = IPAddress(peer), trusts(peerAddress) else {
            return .success(ClientAddress(peer: peer))
        }
        let forwardedLines = headers.filter { $0.name == "forwarded" }.map(\.value)
        let forwardedForLines = headers.filter { $0.name == "x-forwarded-for" }.map(\.value)
        var hops: [ForwardedNode]?
        if !forwardedLines.isEmpty {
            switch ForwardingHeaders.forwarded(forwardedLines) {
            case .success(let parsed): hops = parsed
            case .failure(let problem): return .failure(problem)
            }
        }
        if !forwardedForLines.isEmpty {
            switch ForwardingHeaders.xForwardedFor(forwardedForLines) {
            case .success(let parsed):
                if let hops, hops != parsed {
                    return .failure(ForwardingProblem(
                        .conflictingForwarding, header: "Forwarded",
                        "Forwarded names \(Self.list(hops)) and X-Forwarded-For names \(Self.list(parsed)); send one, or both naming the same hops"))
                }
                hops = parsed
            case .failure(let problem): return .failure(problem)
            }
        }
        guard let hops else { return .success(ClientAddress(peer: peer)) }
        // From the right: skip the trusted proxies; the first other hop is the client.
        for hop in hops.reversed() {
            switch hop {
            case .address(let address) where trusts(address):
                continue
            case .address(let address):
                return .success(ClientAddress(client: address.description, peer: peer, limitKey: address.description))
            case .unknown, .obfuscated:
                return .success(ClientAddress(client: hop.description, peer: peer, limitKey: peer))
            }
        }
        // Every hop a trusted proxy: the request began at the leftmost (a proxy's own
        // health check, say).
        let first = hops[0].description
        return .success(ClientAddress(client: first, peer: peer, limitKey: first))
    }

    static func list(_ hops: [ForwardedNode]) -> String {
        let shown = hops.prefix(4).map(\.description).joined(separator: ", ")
        return "[" + shown + (hops.count > 4 ? ", … (\(hops.count) hops)" : "") + "]"
    }
}
