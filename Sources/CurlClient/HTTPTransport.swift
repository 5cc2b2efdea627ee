import APNsCore
import Timing

/// One header field of a `TransportRequest`: the transport writes it as the line
/// `name: value` (the name in lowercase, as HTTP/2 requires).
public struct HeaderField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One HTTP/2 POST as the transport sends it. The parts stay as they are (no header line
/// is put together here): the transport writes them into memory it keeps per easy handle,
/// so a request costs no string building.
public struct TransportRequest: Sendable {
    /// `/3/device/<token>`; the transport prefixes its base URL.
    public var path: String
    /// The `authorization` header's value (`bearer <JWT>`), nil for none.
    public var authorization: String?
    /// The other headers, in order.
    public var headers: [HeaderField]
    public var body: [UInt8]
    /// Its owner's ticket (a campaign's: ends `notStarted` once withdrawn) and its signing
    /// key's (ends `keyStopped`): a withdrawn request is not written, nor written again.
    public var owner: Withdrawal.Ticket?
    public var key: KeyTicket?

    public init(path: String, authorization: String?, headers: [HeaderField], body: [UInt8],
                owner: Withdrawal.Ticket? = nil, key: KeyTicket? = nil) {
        self.path = path
        self.authorization = authorization
        self.headers = headers
        self.body = body
        self.owner = owner
        self.key = key
    }

    /// Whether the request may no longer start (checked before every write; two loads).
    @inline(__always)
    var isWithdrawn: Bool { (owner?.isWithdrawn ?? false) || (key?.isWithdrawn ?? false) }

    /// What a withdrawn request ends as.
    var withdrawnFailure: TransportFailure {
        if let key, key.isWithdrawn { return TransportFailure(.keyStopped, key.withdrawal.reason) }
        let reason = owner?.withdrawal.reason ?? ""
        return TransportFailure(.notStarted, "not sent: " + (reason.isEmpty ? "its campaign was withdrawn" : reason))
    }

    /// The header lines as sent (`name: value`), authorization first.
    public var headerLines: [String] {
        (authorization.map { ["authorization: " + $0] } ?? []) + headers.map { $0.name + ": " + $0.value }
    }
}

/// The signing key a request was admitted under (`ProviderTokenManager.ticket()`): its
/// withdrawal as of admission, and the key's holder, which the transport tells at once
/// when an answer refuses the key, so that what waits behind that answer does not go out
/// before the caller has read it.
public struct KeyTicket: Sendable {
    /// Unowned: the request lives within `APNsClient.send` (or its callback, which holds
    /// the client), and the client holds the manager and with it the withdrawal (no retain
    /// and release per request on the send path).
    unowned(unsafe) let withdrawal: Withdrawal
    unowned(unsafe) let holder: any RefusedKeyListener
    /// `Withdrawal.epoch` when it was taken.
    let epoch: Int

    public init(withdrawal: Withdrawal, holder: any RefusedKeyListener, epoch: Int) {
        self.withdrawal = withdrawal
        self.holder = holder
        self.epoch = epoch
    }

    @inline(__always)
    var isWithdrawn: Bool { withdrawal.isWithdrawn(since: epoch) }
}

/// Told by the transport thread, before the answer reaches its caller, that a server
/// answered 403 to a request sent under a key (`ProviderTokenManager`). Must not block.
public protocol RefusedKeyListener: AnyObject, Sendable {
    func refusedOnTheWire(status: Int, body: [UInt8])
}

/// What the server answered. Only the headers APNs results depend on are kept.
public struct TransportResponse: Sendable, Equatable {
    public var status: Int
    /// Kept inline (`HeaderText`): the String is made where the answer is read, not on
    /// the transport thread.
    var apnsIdText: HeaderText?
    public var apnsId: String? {
        get { apnsIdText?.string }
        set { apnsIdText = newValue.map(HeaderText.init) }
    }
    /// `apns-unique-id`: the sandbox's id for the notification in the Push Notifications
    /// Console (Apple sends it in the development environment only).
    public var uniqueId: String?
    public var retryAfter: String?
    public var body: [UInt8]

    public init(status: Int, apnsId: String? = nil, uniqueId: String? = nil, retryAfter: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.apnsIdText = apnsId.map(HeaderText.init)
        self.uniqueId = uniqueId
        self.retryAfter = retryAfter
        self.body = body
    }
}

/// A header value as received: up to 40 bytes inline (an apns-id is 36), longer ones as a
/// String. Reading an answer's apns-id then allocates nothing on the transport thread,
/// and the memory of its String is taken and given back on the thread that uses it.
struct HeaderText: Sendable, Equatable {
    private typealias Words = (UInt64, UInt64, UInt64, UInt64, UInt64)
    private static let capacity = MemoryLayout<Words>.size
    private var words: Words = (0, 0, 0, 0, 0)
    private var count = 0
    /// A value longer than `capacity`.
    private var long: String?

    init(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.capacity else {
            long = String(decoding: bytes, as: UTF8.self)
            return
        }
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        count = bytes.count
        withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: source, byteCount: bytes.count) }
    }

    init(_ string: String) {
        var string = string
        self = string.withUTF8 { HeaderText(UnsafeRawBufferPointer($0)) }
    }

    var string: String {
        if let long { return long }
        return withUnsafeBytes(of: words) { String(decoding: UnsafeRawBufferPointer(rebasing: $0[..<count]), as: UTF8.self) }
    }

    static func == (a: HeaderText, b: HeaderText) -> Bool {
        a.count == b.count && a.long == b.long
            && withUnsafeBytes(of: a.words) { x in withUnsafeBytes(of: b.words) { y in x.elementsEqual(y) } }
    }
}

public enum TransportOutcome: Sendable, Equatable {
    case response(TransportResponse)
    case failure(TransportFailure)
}

/// Sends one request and waits for its answer. The libcurl transport implements it;
/// tests and benchmarks can substitute their own. The request is handed over (`consuming`):
/// the libcurl transport keeps it until the answer without a copy (an implementation may
/// take it borrowed all the same).
public protocol HTTPTransport: Sendable {
    nonisolated(nonsending) func send(_ request: consuming TransportRequest) async -> TransportOutcome
    /// Sends and calls `done` once with the outcome, on whichever thread learns it: `done`
    /// must be quick and must not block (the libcurl transport calls it on its transport
    /// thread). The default awaits `send` in a task.
    func send(_ request: consuming TransportRequest, then done: @escaping @Sendable (TransportOutcome) -> Void)
}

extension HTTPTransport {
    public func send(_ request: consuming TransportRequest, then done: @escaping @Sendable (TransportOutcome) -> Void) {
        let request = request
        Task { done(await send(request)) }
    }
}
