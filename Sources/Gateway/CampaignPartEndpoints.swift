import APNs
import HTTPServer
import Outbox
import Payloads
import Storage
import StrictJSON
import Crypto

extension DiagnosticCode {
    /// A part number sent again with other devices (409); the first body stays.
    public static let partConflict = DiagnosticCode(rawValue: "partConflict")
    /// A part for a campaign that takes none: started, or not created in parts (409).
    public static let notFilling = DiagnosticCode(rawValue: "notFilling")
}

/// A campaign bigger than one request: `POST /v1/campaigns?parts=true` (the campaign,
/// no devices) creates it `filling`; `PUT /v1/campaigns/{id}/parts/{part}` gives it a part
/// of its device tokens, one per line, each part within `server.maxBodyBytes`;
/// `POST /v1/campaigns/{id}/start` (with `confirm_devices` past the guard) sends it.
/// Each part goes to storage as it is read: memory is one part's, whatever the total.
enum CampaignPartEndpoints {
    /// Part numbers are 1 to this (a number, not a count: gaps and any order are fine).
    static let maxPart = 1_000_000

    static func register(in builder: inout APIRouterBuilder, sendGuard: SendGuard, campaigns: DurableCampaigns) {
        builder.add("PUT", "/v1/campaigns/{id}/parts/{part}", operation: "campaigns.parts.put") { request, parameters throws(Problem) in
            try put(request, parameters, campaigns: campaigns)
        }
        builder.add("POST", "/v1/campaigns/{id}/start", operation: "campaigns.start") { request, parameters throws(Problem) in
            try start(request, parameters, sendGuard: sendGuard, campaigns: campaigns)
        }
    }

    /// The campaign at `{id}` if the caller may see it (another key's is answered as one
    /// that does not exist, as on every campaign endpoint).
    static func campaign(_ request: HTTPRequest, _ parameters: PathParameters, campaigns: DurableCampaigns,
                         catching: (StorageError) -> Problem?) throws(Problem) -> CampaignSummary {
        guard let summary = try fromStorage(campaigns.storage.campaign(id: parameters["id"] ?? ""), catching: catching),
              parameters.caller.sees(owner: summary.owner)
        else { throw .notFound(request.path) }
        parameters.notes.app = summary.app
        return summary
    }

    static func put(_ request: HTTPRequest, _ parameters: PathParameters, campaigns: DurableCampaigns) throws(Problem) -> HTTPResponse {
        guard let part = QueryParameters.wholeNumber(parameters["part"] ?? ""), (1...maxPart).contains(part) else {
            throw .validation([Diagnostic(.invalidValue, at: .parameter("part"),
                                          "expected a part number from 1 to \(maxPart) in plain digits")])
        }
        guard let contentType = request.header("content-type"), DeviceLines.isNDJSON(contentType) else {
            throw .unsupportedPartType(request.header("content-type"))
        }
        let storageProblem = { (error: StorageError) -> Problem? in
            switch error.code {
            case .partConflict: .partConflict(part: part, campaign: parameters["id"] ?? "")
            case .notFilling: .notFilling(id: parameters["id"] ?? "", detail: error.message)
            case .campaignNotFound: .notFound(request.path)
            default: nil
            }
        }
        let summary = try campaign(request, parameters, campaigns: campaigns, catching: storageProblem)
        // A cancelled (or expired) campaign will never send: it takes no more devices.
        let status = summary.status(at: campaigns.clock.wallSeconds())
        if status.isFinal {
            throw .notFilling(id: summary.id, detail: "campaign \(summary.id) is \(status.rawValue): it takes no parts")
        }
        // Whether it still takes parts is otherwise storage's to say, in the append's
        // transaction: a part stored before is answered as before even after the start.
        let lines = DeviceLines(body: request.body, start: 0, firstLine: 1)
        if let problem = PartLines.problem(lines) { throw problem }
        let tokens = lines.lazy.compactMap { try? $0.token.get() }
        switch try fromStorage(campaigns.appendPart(campaign: summary.id, part: part, sha256: SHA256.hex(request.body), tokens: tokens),
                               catching: storageProblem) {
        case .appended(let receipt): return receiptResponse(receipt, campaign: summary.id, replayed: false)
        case .alreadyAppended(let receipt): return receiptResponse(receipt, campaign: summary.id, replayed: true)
        }
    }

    /// 201 for a part stored now, 200 (`Idempotent-Replayed: true`) for one stored before
    /// with the same body.
    static func receiptResponse(_ receipt: PartReceipt, campaign id: String, replayed: Bool) -> HTTPResponse {
        var w = JSONWriter()
        w.object { w in
            w.member("id", id)
            w.member("part", receipt.part)
            w.member("first_index", receipt.firstIndex)
            w.member("devices", receipt.devices)
            w.member("skipped", receipt.skipped)
            w.member("replayed", replayed)
        }
        w.raw("\n")
        return jsonResponse(status: replayed ? 200 : 201, w.bytes, headers: replayed ? [("Idempotent-Replayed", "true")] : [])
    }

    static func start(_ request: HTTPRequest, _ parameters: PathParameters, sendGuard: SendGuard, campaigns: DurableCampaigns) throws(Problem) -> HTTPResponse {
        let confirmed = try confirmation(request)
        let storageProblem = { (error: StorageError) -> Problem? in
            switch error.code {
            case .notFilling: .noPartYet(parameters["id"] ?? "")
            case .campaignNotFound: .notFound(request.path)
            default: nil
            }
        }
        let summary = try campaign(request, parameters, campaigns: campaigns, catching: storageProblem)
        let now = campaigns.clock.wallSeconds()
        let started = try guardedStart(summary, confirmed: confirmed, sendGuard: sendGuard, now: now) { expected throws(Problem) in
            try fromStorage(campaigns.start(campaign: summary.id, expectedDevices: expected), catching: storageProblem)
        }
        return jsonResponse(CampaignJSON.summary(started, now: campaigns.clock.wallSeconds()))
    }

    /// Checks of the guard against a count that moved before a start gives up (422): parts
    /// are still being stored.
    static let startAttempts = 3

    /// The guard, then `start` with the count it passed: storage starts the campaign only if
    /// that is still its count (a part may be stored in between). A count that moved is
    /// checked again: a confirmation names one count, so it is refused; without one, the
    /// campaign starts if its new count is still within the guard.
    static func guardedStart(_ first: CampaignSummary, confirmed: Int?, sendGuard: SendGuard, now: Double,
                             start: (_ expectedDevices: Int?) throws(Problem) -> FillOutcome) throws(Problem) -> CampaignSummary {
        var summary = first
        for _ in 0..<startAttempts {
            // Started before (or never filled in parts): answered as it is, so a start
            // whose answer was lost can be sent again.
            if summary.filling {
                // Cancelled (or expired) while its parts came in: it never starts.
                let status = summary.status(at: now)
                if status.isFinal {
                    throw Problem(status: 409, code: .campaignFinished, title: "Conflict",
                                  detail: "campaign \(summary.id) is \(status.rawValue); it cannot be started",
                                  errors: [Diagnostic(.campaignFinished, at: .parameter("id"), "the campaign is \(status.rawValue)")])
                }
                if summary.devices == 0 { throw .noPartYet(summary.id) }
                if let refusal = sendGuard.problem(devices: summary.devices, confirmed: confirmed,
                                                   at: .pointer(.root.appending("confirm_devices"))) {
                    throw .confirmationRequired(refusal)
                }
            }
            switch try start(summary.filling ? summary.devices : nil) {
            case .started(let started), .unchanged(let started): return started
            case .devicesChanged(let moved): summary = moved
            }
        }
        throw .partsStillArriving(summary)
    }

    /// The start's body: none, or `{"confirm_devices": N}`.
    static func confirmation(_ request: HTTPRequest) throws(Problem) -> Int? {
        if request.body.isEmpty { return nil }
        let json = try JSONBody.decode(request)
        guard let object = json.objectValue else {
            throw .validation([Diagnostic(.wrongType, at: .pointer(.root), "expected an object: {\"confirm_devices\": N}, or no body")])
        }
        var errors: [Diagnostic] = []
        var confirmed: Int?
        for member in object.members {
            let at = DiagnosticLocation.pointer(.root.appending(member.key))
            guard member.key == "confirm_devices" else {
                errors.append(Diagnostic(.unknownKey, at: at, "unknown key; expected confirm_devices"))
                continue
            }
            // As in a campaign (CampaignReader): a whole number as written, 5.0 is not.
            if let n = member.value.int64Value, (1...Int64(Int32.max)).contains(n) {
                confirmed = Int(n)
            } else if case .number(let text) = member.value {
                errors.append(Diagnostic(.invalidValue, at: at, "expected the campaign's device count, a whole number from 1 to \(Int32.max), found \(TextSafety.excerpt(text))"))
            } else {
                errors.append(Diagnostic(.wrongType, at: at, "expected the campaign's device count (a whole number)"))
            }
        }
        guard errors.isEmpty else { throw .validation(errors) }
        return confirmed
    }
}

/// The checks on a part's lines before anything is stored: every line a token (the
/// first 20 bad ones reported, by line), at least one, and no token twice in the part.
enum PartLines {
    static let maxListed = 20

    static func problem(_ lines: DeviceLines) -> Problem? {
        var errors: [Diagnostic] = []
        var count = 0
        // A 64-bit hash per token, sorted: 8 bytes a device instead of a set of strings.
        var hashes: [UInt64] = []
        for line in lines {
            count += 1
            switch line.token {
            case .failure(let problem):
                if errors.count < maxListed {
                    errors.append(Diagnostic(PayloadErrorCode.invalidToken.diagnosticCode, at: .line(line.number, file: nil), problem.message))
                }
            case .success(let token):
                hashes.append(hash(token))
            }
        }
        if count == 0 {
            errors.append(Diagnostic(PayloadErrorCode.noDevices.diagnosticCode, at: .line(1, file: nil), "no device lines: one device token per line"))
        }
        guard errors.isEmpty else { return .validation(errors) }
        hashes.sort()
        var colliding = Set<UInt64>()
        for i in hashes.indices.dropFirst() where hashes[i] == hashes[i - 1] { colliding.insert(hashes[i]) }
        guard !colliding.isEmpty else { return nil }
        // Equal hashes: compare the tokens themselves (a hash collision is not a duplicate).
        var firstLine: [String: Int] = [:]
        for line in lines {
            guard case .success(let token) = line.token, colliding.contains(hash(token)) else { continue }
            if let first = firstLine[token] {
                if errors.count < maxListed {
                    errors.append(Diagnostic(PayloadErrorCode.duplicateDevice.diagnosticCode, at: .line(line.number, file: nil),
                                             "the token of line \(first) again"))
                }
            } else {
                firstLine[token] = line.number
            }
        }
        return errors.isEmpty ? nil : .validation(errors)
    }

    /// FNV-1a, 64 bits: stable and cheap; collisions are settled by comparing tokens.
    static func hash(_ token: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return h
    }
}

extension Problem {
    /// 409: the part number was stored before with another body.
    static func partConflict(part: Int, campaign id: String) -> Problem {
        let message = "part \(part) of campaign \(id) was stored before with other devices; a part's body cannot change (send it with a new part number)"
        return Problem(status: 409, code: .partConflict, title: "Conflict", detail: message,
                       errors: [Diagnostic(.partConflict, at: .parameter("part"), "already stored with a different body")])
    }

    /// 409: parts for a campaign that takes none.
    static func notFilling(id: String, detail: String) -> Problem {
        Problem(status: 409, code: .notFilling, title: "Conflict",
                detail: detail + " (parts go to a campaign created with ?parts=true, before its start)",
                errors: [Diagnostic(.notFilling, at: .parameter("id"), "the campaign takes no parts")])
    }

    /// 422: parts kept being stored while the campaign was being started; nothing started.
    static func partsStillArriving(_ summary: CampaignSummary) -> Problem {
        .confirmationRequired(Diagnostic(.confirmationRequired, at: .pointer(.root.appending("confirm_devices")),
                                         "campaign \(summary.id) got more devices while it was being started (\(summary.devices) now); "
                                         + "nothing was sent: start it again once its parts are stored, with \"confirm_devices\": \(summary.devices)"))
    }

    /// 422: a start before any part with a device.
    static func noPartYet(_ id: String) -> Problem {
        validation([Diagnostic(PayloadErrorCode.noDevices.diagnosticCode, at: .parameter("id"),
                               "campaign \(id) has no devices yet: send its parts (PUT /v1/campaigns/\(id)/parts/1, …) first")])
    }

    static func unsupportedPartType(_ contentType: String?) -> Problem {
        Problem(status: 415, code: .unsupportedMediaType, title: "Unsupported Media Type",
                detail: "a part is application/x-ndjson, one device token per line; got \(contentType.map { TextSafety.excerpt($0) } ?? "no Content-Type")")
    }
}
