import StrictJSON

/// The API's OpenAPI 3.1 description, served at `GET /openapi.json`. A test checks that
/// every route the router knows is described here and nothing else is.
enum OpenAPIDocument {
    /// The document as this server serves it: with no API keys configured (loopback
    /// only) no operation needs the bearer scheme, and the document says so.
    static func text(keysRequired: Bool, privateProbes: Bool = false) -> String {
        guard !keysRequired else {
            guard privateProbes else { return text }
            // server.privateProbes: the probes that name apps, key ids and URLs need an admin key.
            var document = text
            for summary in [readinessSummary, metricsSummary] {
                document = document.replacing("\"summary\": \"\(summary)\",\n        \"security\": [],",
                                              with: "\"summary\": \"\(summary)\",\n        \"description\": \"Needs an admin key (server.privateProbes); a client key gets 404.\",")
            }
            return document
        }
        return text.replacing("\n  \"security\": [{\"bearer\": []}],\n", with: "\n  \"security\": [],\n")
            .replacing("Not required when no keys are configured and the server listens on loopback only.",
                       with: "This server has no keys configured and listens on loopback only: no operation requires it. It serves only a loopback Host (localhost, 127.0.0.0/8, [::1]) and no Origin but a loopback one: anything else is 403 foreignRequest (DNS rebinding; the AASA is served for any Host).")
    }

    static let readinessSummary = "Configuration loaded, signing key usable, storage writable. The checks name every app, key id and upstream URL (server.privateProbes keeps them behind an admin key)."
    static let metricsSummary = "Prometheus text format. The labels name every app (server.privateProbes keeps them behind an admin key)."

    static let text = withPerAppPaths(withChannelPaths(withChannelComponents(written)))

    /// The characters `TextSafety.isUnsafe` refuses in the Basic Multilingual Plane, which
    /// JSON Schema's regular expressions (UTF-16 code units) can name one by one; a test
    /// checks every BMP scalar against `isUnsafe`. The few unsafe scalars above U+FFFF
    /// (tags, some format controls) are refused by the gateway with a pointer (422).
    static let unsafeBMPRanges: [ClosedRange<UInt32>] = [
        0x0...0x1F, 0x7F...0x9F, 0xAD...0xAD, 0x600...0x605, 0x61C...0x61C, 0x6DD...0x6DD, 0x70F...0x70F,
        0x890...0x891, 0x8E2...0x8E2, 0x180E...0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x206F,
        0xFEFF...0xFEFF, 0xFFF9...0xFFFB,
    ]

    /// `PlainText`'s pattern as it stands inside the document's JSON string (backslashes doubled).
    static let plainTextPattern: String = {
        func escape(_ v: UInt32) -> String {
            let hex = String(v, radix: 16, uppercase: true)
            return "\\\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        let classes = unsafeBMPRanges.map { $0.count == 1 ? escape($0.lowerBound) : escape($0.lowerBound) + "-" + escape($0.upperBound) }
        return "^[^" + classes.joined() + "]+$"
    }()

    /// The endpoints of one app: each is described once at `/v1` + suffix (the only app)
    /// and copied to `/v1/apps/{app}` + suffix with the `app` path parameter.
    static let perAppSuffixes = ["/links/check", "/notifications/preview", "/templates", "/routes", "/tokens/dead", "/tokens/{token}/register", "/channels", "/channels/{channel}"]

    /// `written` with a path item for `/v1/apps/{app}` + each suffix, inserted before the
    /// AASA's path (text insertion: the rest of the document stays as written).
    static func withPerAppPaths(_ written: String) -> String {
        guard let document = try? JSONParser().parse(written), let paths = document.objectValue?["paths"]?.objectValue,
              let anchor = written.firstRange(of: "    \"/.well-known/apple-app-site-association\": {") else { return written }
        let appParameter = JSON.object(JSONObject([
            JSONMember(key: "name", value: .string("app")), JSONMember(key: "in", value: .string("path")),
            JSONMember(key: "required", value: .bool(true)), JSONMember(key: "schema", value: .object(JSONObject([JSONMember(key: "type", value: .string("string"))]))),
            JSONMember(key: "description", value: .string("The app's name (GET /v1/apps). An app that does not exist, or that the key may not use, is 404 with unknownApp.")),
        ]))
        var inserted = ""
        for suffix in perAppSuffixes {
            guard let item = paths["/v1" + suffix]?.objectValue else { continue }
            var copy = JSONObject()
            for operation in item.members {
                guard var object = operation.value.objectValue else { continue }
                if let id = object["operationId"]?.stringValue { set(&object, "operationId", .string("apps." + id)) }
                set(&object, "parameters", .array([appParameter] + (object["parameters"]?.arrayValue ?? [])))
                if var responses = object["responses"]?.objectValue, responses["404"] == nil {
                    set(&responses, "404", .object(JSONObject([JSONMember(key: "$ref", value: .string("#/components/responses/Problem"))])))
                    set(&object, "responses", .object(responses))
                }
                copy.members.append(JSONMember(key: operation.key, value: .object(object)))
            }
            inserted += "    " + JSONWriter.quoted("/v1/apps/{app}" + suffix) + ": " + JSONWriter.serialize(.object(copy)) + ",\n"
        }
        var text = written
        text.insert(contentsOf: inserted, at: anchor.lowerBound)
        return text
    }

    private static func set(_ object: inout JSONObject, _ key: String, _ value: JSON) {
        if let i = object.members.firstIndex(where: { $0.key == key }) { object.members[i].value = value } else {
            object.members.append(JSONMember(key: key, value: value))
        }
    }

    static let written = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "pushgate",
    "version": "\#(PushgateVersion.current)",
    "description": "Push-notification gateway for iOS apps: verified deep links, exact APNs payloads, HTTP/2 delivery. Every error is application/problem+json (RFC 9457) with a stable code. HEAD is served wherever GET is (same status and headers, no body). An operation takes only the query parameters it declares, each once: any other, or a repeated one, is 400 invalidQuery (unknownParameter, duplicateParameter)."
  },
  "servers": [{"url": "/", "description": "The server this document was fetched from."}],
  "security": [{"bearer": []}],
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "description": "An API key; the configuration stores its SHA-256. Not required when no keys are configured and the server listens on loopback only."}
    },
    "schemas": {
      "Token": {"type": "string", "pattern": "^(?:[0-9a-f]{2}){32,100}$", "description": "A device token as APNs wants it: lowercase hex, 64 to 200 digits."},
      "TokenInput": {"type": "string", "pattern": "^[ <>]*(?:[0-9a-fA-F][ <>]*[0-9a-fA-F][ <>]*){32,100}$",
                     "description": "A device token: 64 to 200 hex digits (an even number), either case; spaces, < and > (as Xcode logs print tokens) are dropped."},
      "PlainText": {"type": "string", "minLength": 1, "pattern": "\#(plainTextPattern)",
                    "description": "Not empty, and no control or invisible character (C0/C1 controls, DEL, line and paragraph separators, bidi controls and other format characters)."},
      "Flag": {"description": "true or false; Apple's 0 and 1 are accepted too.", "oneOf": [{"type": "boolean"}, {"enum": [0, 1]}]},
      "Variables": {"type": "object", "description": "Values for a template's {{placeholders}}: strings, or numbers kept as written (finite as a double; integers within ±2^53).",
                    "additionalProperties": {"type": ["string", "number"]}},
      "CampaignSummary": {"allOf": [{"$ref": "#/components/schemas/CampaignFields"}], "unevaluatedProperties": false},
      "CampaignFields": {
        "type": "object",
        "description": "The members every campaign answer has (the detail adds its page of results).",
        "required": ["id", "status", "app", "environment", "dry_run", "created_at", "finished_at", "send_at", "expires_at", "lane", "rate_per_second", "devices", "not_sent", "counts"],
        "properties": {
          "id": {"type": "string"},
          "status": {"enum": ["scheduled", "sending", "paused", "completed", "cancelled", "expired", "filling"], "description": "filling: created with ?parts=true and not started; nothing of it is sent."},
          "app": {"type": ["string", "null"], "description": "The app it is for (null: written before campaigns named their app, with several apps configured)."},
          "environment": {"type": ["string", "null"], "enum": ["production", "sandbox", null]},
          "dry_run": {"type": "boolean"},
          "created_at": {"type": "string", "format": "date-time"},
          "finished_at": {"type": ["string", "null"], "format": "date-time"},
          "send_at": {"type": ["string", "null"], "format": "date-time"},
          "expires_at": {"type": ["string", "null"], "format": "date-time"},
          "lane": {"enum": ["transactional", "bulk"]},
          "rate_per_second": {"type": ["number", "null"], "exclusiveMinimum": 0},
          "devices": {"type": "integer", "minimum": 0},
          "channel": {"type": "string", "description": "A channel campaign's broadcast channel id (its one result entry is the channel)."},
          "failure": {"type": "string", "description": "Only on a campaign that failed because a stored segment of it does not decode: which, and why. Its unsent devices ended failed (segmentCorrupt)."},
          "not_sent": {"type": "integer", "minimum": 0, "description": "Devices that will never be sent because the campaign was cancelled or expired."},
          "counts": {"type": "object", "description": "Devices by state.",
                     "required": ["pending", "in-flight", "retrying", "delivered", "failed", "unregistered", "skipped", "dry-run", "cancelled", "expired"],
                     "additionalProperties": false,
                     "properties": {"pending": {"type": "integer", "minimum": 0}, "in-flight": {"type": "integer", "minimum": 0}, "retrying": {"type": "integer", "minimum": 0},
                                    "delivered": {"type": "integer", "minimum": 0}, "failed": {"type": "integer", "minimum": 0}, "unregistered": {"type": "integer", "minimum": 0},
                                    "skipped": {"type": "integer", "minimum": 0}, "dry-run": {"type": "integer", "minimum": 0}, "cancelled": {"type": "integer", "minimum": 0},
                                    "expired": {"type": "integer", "minimum": 0}}}
        }
      },
      "Problem": {
        "type": "object",
        "required": ["type", "title", "status", "code", "detail"],
        "additionalProperties": false,
        "properties": {
          "type": {"type": "string", "pattern": "^urn:pushgate:problem:[A-Za-z]+$", "examples": ["urn:pushgate:problem:validationFailed"]},
          "title": {"type": "string"},
          "status": {"type": "integer", "minimum": 400, "maximum": 599},
          "code": {"description": "The kind of problem (docs/errors.md); never depends on how many errors there are.",
                   "enum": ["malformedJSON", "invalidQuery", "invalidHeader", "unauthorized", "foreignRequest", "notFound", "methodNotAllowed", "idempotencyKeyReused", "bodyTooLarge", "unsupportedMediaType", "validationFailed", "confirmationRequired", "campaignFinished", "partConflict", "notFilling", "rateLimited", "shuttingDown", "storageUnavailable", "overloaded", "malformedRequest", "requestLineTooLong", "headersTooLarge", "httpVersionNotSupported", "channelsUnavailable", "apnsRefused", "apnsUnavailable", "upstreamBusy", "registryFull"]},
          "detail": {"type": "string", "maxLength": 1100, "description": "In words (at most 1 KiB, cut beyond); when more problems were found than listed, it gives the full count."},
          "errors": {
            "type": "array",
            "minItems": 1,
            "maxItems": 100,
            "items": {
              "type": "object",
              "required": ["code", "detail"],
              "additionalProperties": false,
              "maxProperties": 3,
              "description": "One diagnostic: its location as at most one of pointer, parameter, header or line.",
              "properties": {
                "pointer": {"type": "string", "description": "RFC 6901 JSON pointer into the request body."},
                "parameter": {"type": "string", "description": "A query or path parameter."},
                "header": {"type": "string", "description": "A request header."},
                "line": {"type": "integer", "minimum": 1, "description": "A line of an application/x-ndjson body."},
                "code": {"enum": ["invalidJSON", "invalidUTF8", "duplicateKey", "tooDeep", "tooLarge", "unknownKey", "missing", "wrongType", "invalidValue", "conflictingFields", "tooLong", "malformed", "schemeNotAllowed", "hostNotAllowed", "userInfoNotAllowed", "portNotAllowed", "fragmentNotAllowed", "forbiddenCharacter", "invalidPercentEncoding", "dotSegment", "emptySegment", "trailingSlash", "tooManyPathSegments", "tooManyQueryItems", "unknownQueryParameter", "duplicateQueryParameter", "credentialInQuery", "invalidParameter", "noMatchingRoute", "nothingToSend", "noDevices", "invalidToken", "duplicateDevice", "unknownTemplate", "invalidTemplate", "missingVariable", "invalidPriority", "backgroundRequiresContentAvailable", "backgroundRequiresPriority5", "backgroundForbidsAlert", "backgroundForbidsSound", "backgroundForbidsBadge", "collapseIdTooLong", "relevanceScoreOutOfRange", "invalidExpiration", "reservedDataKey", "liveActivityRequiresMember", "liveActivityForbidsMember", "liveActivityPriority", "liveActivityDateOrder", "pushTypeForbidsMember", "priorityOneCannotInterrupt", "mdmRequiresCertificate", "unsafeNumber", "payloadTooLarge", "channelRequiresLiveActivity", "channelForbidsMember", "unknownParameter", "duplicateParameter", "foreignHost", "foreignOrigin", "proxiedRequest", "invalidForwarding", "forwardingTooLarge", "conflictingForwarding", "invalidIdempotencyKey", "invalidBatchSize", "devicesInHeader", "ambiguousFraming", "duplicateContentLength", "invalidContentLength", "unsupportedTransferEncoding", "obsoleteLineFolding", "bareLineFeed", "controlCharacter", "malformedRequestLine", "invalidRequestTarget", "malformedHeader", "duplicateHost", "missingHost", "duplicateAuthorization", "duplicateIdempotencyKey", "tooManyQueryParameters", "malformedChunk", "idempotencyKeyReused", "confirmationRequired", "unknownApp", "scheduleInPast", "expiresBeforeSendAt", "campaignFinished", "partConflict", "notFilling", "unknownActivity", "activityTokenLimit", "appTokenLimit", "invalidChannelId", "channelStoresNoMessage", "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic", "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken", "MissingTopic", "PayloadEmpty", "TopicDisallowed", "MissingChannelId", "BadChannelId", "ChannelNotRegistered", "CannotCreateChannelConfig", "FeatureNotEnabled", "MissingPushType", "BadCertificate", "BadCertificateEnvironment", "ExpiredProviderToken", "Forbidden", "InvalidProviderToken", "MissingProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken", "BadPath", "MethodNotAllowed", "ExpiredToken", "Unregistered", "PayloadTooLarge", "TooManyProviderTokenUpdates", "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown", "timeout", "tlsFailed", "connectionLost", "unanswered", "streamReset", "unreachable", "keyStopped", "cancelled", "transportError", "notStarted"]},
                "detail": {"type": "string"}
              }
            }
          }
        }
      },
      "DeviceReason": {
        "type": "string",
        "description": "Apple's reason name when APNs answered (a name Apple adds later is passed through as it is), else pushgate's code for its own decision (docs/errors.md).",
        "examples": ["BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic", "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken", "MissingTopic", "PayloadEmpty", "TopicDisallowed", "MissingChannelId", "BadChannelId", "ChannelNotRegistered", "CannotCreateChannelConfig", "FeatureNotEnabled", "MissingPushType", "BadCertificate", "BadCertificateEnvironment", "ExpiredProviderToken", "Forbidden", "InvalidProviderToken", "MissingProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken", "BadPath", "MethodNotAllowed", "ExpiredToken", "Unregistered", "PayloadTooLarge", "TooManyProviderTokenUpdates", "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown", "timeout", "tlsFailed", "connectionLost", "unanswered", "streamReset", "unreachable", "keyStopped", "cancelled", "notStarted", "transportError", "campaignMissing", "unknownStoredPushType", "tooLong", "malformed", "schemeNotAllowed", "hostNotAllowed", "userInfoNotAllowed", "portNotAllowed", "fragmentNotAllowed", "forbiddenCharacter", "invalidPercentEncoding", "dotSegment", "emptySegment", "trailingSlash", "tooManyPathSegments", "tooManyQueryItems", "unknownQueryParameter", "duplicateQueryParameter", "credentialInQuery", "invalidParameter", "noMatchingRoute", "nothingToSend", "noDevices", "invalidToken", "duplicateDevice", "unknownTemplate", "invalidTemplate", "missingVariable", "invalidPriority", "backgroundRequiresContentAvailable", "backgroundRequiresPriority5", "backgroundForbidsAlert", "backgroundForbidsSound", "backgroundForbidsBadge", "collapseIdTooLong", "relevanceScoreOutOfRange", "invalidExpiration", "reservedDataKey", "liveActivityRequiresMember", "liveActivityForbidsMember", "liveActivityPriority", "liveActivityDateOrder", "pushTypeForbidsMember", "priorityOneCannotInterrupt", "mdmRequiresCertificate", "unsafeNumber", "payloadTooLarge", "invalidChannelId", "channelRequiresLiveActivity", "channelForbidsMember"]
      },
      "Preview": {
        "type": "object",
        "required": ["valid", "push_type", "topic", "priority", "template", "device_count", "shown", "requests"],
        "additionalProperties": false,
        "properties": {
          "valid": {"const": true},
          "push_type": {"type": "string"},
          "topic": {"type": "string"},
          "priority": {"type": "integer"},
          "template": {"type": ["string", "null"]},
          "device_count": {"type": "integer", "minimum": 1},
          "channel": {"type": "string", "description": "A channel campaign's channel id (its one request is the broadcast)."},
          "shown": {"type": "integer", "minimum": 0, "maximum": 3},
          "requests": {"type": "array", "maxItems": 3, "items": {"$ref": "#/components/schemas/PreviewRequest"}}
        }
      },
      "PreviewRequest": {
        "type": "object",
        "required": ["device", "method", "path", "headers", "body", "body_text", "size", "limit", "truncated", "link", "alert", "warnings", "simulator"],
        "additionalProperties": false,
        "properties": {
          "device": {"type": "string", "description": "The device token (hex)."},
          "method": {"const": "POST"},
          "path": {"type": "string", "examples": ["/3/device/8a2f0c1d9e4b7f3a2c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3"]},
          "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Every header in sending order; authorization is shown as bearer <redacted>."},
          "body": {"type": "object", "description": "The body, as JSON."},
          "body_text": {"type": "string", "description": "The body's exact bytes (UTF-8), as sent: what size counts."},
          "size": {"type": "integer", "description": "The body's size in bytes."},
          "limit": {"enum": [4096, 5120], "description": "APNs' limit for the push type (5120 for voip)."},
          "truncated": {"type": "boolean", "description": "The alert body was shortened to fit (\"truncate\": true)."},
          "link": {"description": "The device's canonical deep link, the route it opens and its parameters; null without a link.",
                   "oneOf": [{"$ref": "#/components/schemas/LinkResult"}, {"type": "null"}]},
          "alert": {"oneOf": [{"$ref": "#/components/schemas/PreviewAlert"}, {"type": "null"}], "description": "Null for a push without alert text."},
          "warnings": {"type": "array", "items": {"$ref": "#/components/schemas/PreviewWarning"}},
          "simulator": {"description": "The .apns file for xcrun simctl push; null for push types the Simulator does not take.", "oneOf": [
            {"type": "object", "required": ["file_name", "contents", "size", "limit"], "additionalProperties": false, "properties": {
              "file_name": {"type": "string", "examples": ["device-1-8a2f0c1d-pl-PL.apns"]},
              "contents": {"type": "string", "description": "The file's text: the body with \"Simulator Target Bundle\" first."},
              "size": {"type": "integer"},
              "limit": {"const": 4096}}},
            {"type": "null"}]}
        }
      },
      "PreviewAlert": {
        "type": "object",
        "required": ["locale", "places", "title", "subtitle", "body"],
        "additionalProperties": false,
        "description": "The alert texts as sent, and their lines on an iPhone: an approximation of iOS's layout (typical SF Pro widths on a 390-point screen), not a rendering by iOS.",
        "properties": {
          "locale": {"type": ["string", "null"], "description": "The locale the campaign asked for."},
          "places": {"type": "array", "items": {"enum": ["lockScreen", "banner", "notificationCenter"]}, "description": "Where this layout applies (one layout on an iPhone in portrait)."},
          "title": {"oneOf": [{"$ref": "#/components/schemas/PreviewText"}, {"type": "null"}]},
          "subtitle": {"oneOf": [{"$ref": "#/components/schemas/PreviewText"}, {"type": "null"}]},
          "body": {"oneOf": [{"$ref": "#/components/schemas/PreviewText"}, {"type": "null"}]}
        }
      },
      "PreviewText": {
        "type": "object",
        "required": ["text", "source", "lines", "total_lines", "max_lines", "cut"],
        "additionalProperties": false,
        "properties": {
          "text": {"type": "string", "description": "Exactly as in the body."},
          "source": {"type": "string", "description": "The template locale it came from (as the template writes it); for the default strings the template's default_locale, or default when it names none; campaign for an inline alert.", "examples": ["pl-PL", "pl", "en", "default", "campaign"]},
          "lines": {"type": "array", "items": {"type": "string"}, "description": "The visible lines; when cut, the last ends in …"},
          "total_lines": {"type": "integer", "minimum": 1},
          "max_lines": {"type": "integer", "description": "Lines shown before cutting: 1 for title and subtitle, 4 for the body."},
          "cut": {"type": "boolean", "description": "The text takes more than max_lines lines."}
        }
      },
      "PreviewWarning": {
        "type": "object",
        "required": ["code", "field", "message"],
        "additionalProperties": false,
        "properties": {
          "code": {"enum": ["missingTranslation", "cutOnScreen", "bodyShortened"]},
          "field": {"enum": ["title", "subtitle", "body", null]},
          "message": {"type": "string"}
        }
      },
      "TemplateList": {
        "type": "object",
        "required": ["templates", "invalid"],
        "additionalProperties": false,
        "properties": {
          "templates": {"type": "array", "items": {
            "type": "object",
            "required": ["name", "description", "default_locale", "push_type", "thread_id", "category", "interruption_level", "locales", "deeplink", "variables"],
            "additionalProperties": false,
            "properties": {
              "name": {"type": "string"},
              "description": {"type": ["string", "null"]},
              "default_locale": {"type": ["string", "null"], "description": "The language of the template's default strings."},
              "push_type": {"type": "string"},
              "thread_id": {"type": ["string", "null"]},
              "category": {"type": ["string", "null"]},
              "interruption_level": {"type": ["string", "null"]},
              "locales": {"type": "array", "items": {"type": "string"}, "description": "Locale tags as the template writes them; the default strings are not listed."},
              "deeplink": {"type": ["string", "null"], "description": "The link pattern with {{placeholders}}."},
              "variables": {"type": "array", "items": {"type": "object", "required": ["name", "description"], "additionalProperties": false,
                "properties": {"name": {"type": "string"}, "description": {"type": ["string", "null"]}}}}
            }}},
          "invalid": {"type": "array", "items": {
            "type": "object", "required": ["name", "problems"], "additionalProperties": false,
            "properties": {
              "name": {"type": "string"},
              "problems": {"type": "array", "items": {"type": "object", "required": ["code", "pointer", "message"], "additionalProperties": false,
                "properties": {"code": {"type": "string"}, "pointer": {"type": "string"}, "message": {"type": "string"}}}}
            }}}
        }
      },
      "LinkResult": {
        "oneOf": [
          {
            "type": "object",
            "required": ["ok", "canonical", "route", "params", "query"],
            "additionalProperties": false,
            "properties": {
              "ok": {"const": true},
              "canonical": {"type": "string"},
              "route": {"type": "string"},
              "params": {"type": "object", "additionalProperties": {"type": "string"}},
              "query": {"type": "object", "additionalProperties": {"type": "string"}}
            }
          },
          {
            "type": "object",
            "required": ["ok", "error"],
            "additionalProperties": false,
            "properties": {
              "ok": {"const": false},
              "error": {
                "type": "object",
                "required": ["code", "message"],
                "additionalProperties": false,
                "properties": {"code": {"enum": ["tooLong", "malformed", "schemeNotAllowed", "hostNotAllowed", "userInfoNotAllowed", "portNotAllowed", "fragmentNotAllowed", "forbiddenCharacter", "invalidPercentEncoding", "dotSegment", "emptySegment", "trailingSlash", "tooManyPathSegments", "tooManyQueryItems", "unknownQueryParameter", "duplicateQueryParameter", "credentialInQuery", "invalidParameter", "noMatchingRoute"]}, "message": {"type": "string"}}
              }
            }
          }
        ]
      },
      "LiveActivityToken": {
        "type": "object",
        "description": "A Live Activity token the app reports: its push-to-start token (ActivityKit's pushToStartTokenUpdates), or one activity's update token (Activity.pushTokenUpdates, with Activity.id). A token reported again takes the new kind and activity, and is alive again if APNs had called it dead.",
        "oneOf": [
          {"required": ["kind", "token"], "properties": {"kind": {"const": "push-to-start"}}, "not": {"required": ["activity_id"]}},
          {"required": ["kind", "token", "activity_id"], "properties": {"kind": {"const": "update"}}}
        ],
        "additionalProperties": false,
        "properties": {
          "app": {"allOf": [{"$ref": "#/components/schemas/PlainText"}], "description": "The app (GET /v1/apps); optional when the key may use one app."},
          "kind": {"enum": ["push-to-start", "update"]},
          "token": {"$ref": "#/components/schemas/Token"},
          "activity_id": {"$ref": "#/components/schemas/ActivityID"},
          "replaces": {"allOf": [{"$ref": "#/components/schemas/Token"}], "description": "The outdated token this one replaces (ActivityKit gave a new one): it is removed from the registry. Not the token itself (422 conflictingFields)."}
        }
      },
      "ActivityID": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", "description": "ActivityKit's Activity.id (a UUID string)."},
      "LiveActivityAlert": {
        "type": "object", "required": ["title", "body"], "additionalProperties": false,
        "description": "A Live Activity alert: a title and a body (ActivityKit's AlertConfiguration); the campaign's sound plays with it.",
        "properties": {"title": {"$ref": "#/components/schemas/PlainText"}, "body": {"$ref": "#/components/schemas/PlainText"}}
      },
      "LiveActivityUpdate": {
        "type": "object",
        "required": ["live_activity"],
        "additionalProperties": false,
        "dependentRequired": {"sound": ["alert"]},
        "description": "The update of one activity, without devices: the path gives the event and the activity, whose registered update tokens are the devices. Sent at once, in the app's environment; every member is the campaign's (docs/payloads.md), checked by the same rules, the send guard too: more tokens than guard.confirmAbove need confirm_devices equal to their count (else 422 confirmationRequired).",
        "properties": {
          "app": {"$ref": "#/components/schemas/Campaign/properties/app"},
          "alert": {"$ref": "#/components/schemas/LiveActivityAlert"},
          "sound": {"$ref": "#/components/schemas/PlainText"},
          "priority": {"enum": [10, 5]},
          "expiration": {"$ref": "#/components/schemas/Campaign/properties/expiration"},
          "collapse_id": {"$ref": "#/components/schemas/Campaign/properties/collapse_id"},
          "dry_run": {"type": "boolean"},
          "lane": {"$ref": "#/components/schemas/Campaign/properties/lane"},
          "rate_per_second": {"$ref": "#/components/schemas/Campaign/properties/rate_per_second"},
          "confirm_devices": {"$ref": "#/components/schemas/Campaign/properties/confirm_devices"},
          "live_activity": {
            "type": "object",
            "required": ["content_state"],
            "additionalProperties": false,
            "description": "stale_date must be after timestamp, which defaults to the moment the update is accepted (422 liveActivityDateOrder): a rule between two members and the clock that JSON Schema cannot state; the example keeps it.",
            "examples": [{"content_state": {"status": "on the way", "etaMinutes": 8}, "timestamp": 1796145600, "stale_date": 1796146800}],
            "properties": {
              "event": {"const": "update"},
              "content_state": {"type": "object", "description": "The app's Activity.ContentState from now on."},
              "timestamp": {"$ref": "#/components/schemas/Campaign/properties/live_activity/properties/timestamp"},
              "stale_date": {"$ref": "#/components/schemas/Campaign/properties/live_activity/properties/stale_date"},
              "relevance_score": {"type": "number", "minimum": 0}
            }
          }
        }
      },
      "LiveActivityEnd": {
        "type": "object",
        "additionalProperties": false,
        "dependentRequired": {"sound": ["alert"]},
        "description": "The end of one activity, without devices (see LiveActivityUpdate).",
        "properties": {
          "app": {"$ref": "#/components/schemas/Campaign/properties/app"},
          "alert": {"$ref": "#/components/schemas/LiveActivityAlert"},
          "sound": {"$ref": "#/components/schemas/PlainText"},
          "priority": {"enum": [10, 5]},
          "expiration": {"$ref": "#/components/schemas/Campaign/properties/expiration"},
          "collapse_id": {"$ref": "#/components/schemas/Campaign/properties/collapse_id"},
          "dry_run": {"type": "boolean"},
          "lane": {"$ref": "#/components/schemas/Campaign/properties/lane"},
          "rate_per_second": {"$ref": "#/components/schemas/Campaign/properties/rate_per_second"},
          "confirm_devices": {"$ref": "#/components/schemas/Campaign/properties/confirm_devices"},
          "live_activity": {
            "type": "object",
            "additionalProperties": false,
            "description": "dismissal_date is at most four hours after timestamp, which defaults to the moment the end is accepted (422 liveActivityDateOrder).",
            "examples": [{"content_state": {"status": "delivered", "etaMinutes": 0}, "timestamp": 1796146200, "dismissal_date": 1796149800}],
            "properties": {
              "event": {"const": "end"},
              "content_state": {"type": "object", "description": "The final content (optional)."},
              "timestamp": {"$ref": "#/components/schemas/Campaign/properties/live_activity/properties/timestamp"},
              "dismissal_date": {"$ref": "#/components/schemas/Campaign/properties/live_activity/properties/dismissal_date"},
              "relevance_score": {"type": "number", "minimum": 0}
            }
          }
        }
      },
      "Campaign": {
        "type": "object",
        "oneOf": [{"required": ["devices"]}, {"required": ["channel"]}],
        "additionalProperties": false,
        "dependentRequired": {"locale": ["template"], "variables": ["template"]},
        "not": {"required": ["template", "alert"]},
        "anyOf": [
          {"required": ["push_type"], "properties": {"push_type": {"not": {"const": "alert"}}}},
          {"required": ["template"]}, {"required": ["alert"]}, {"required": ["sound"]}, {"required": ["badge"]}, {"required": ["channel"]},
          {"required": ["live_activity"]}, {"required": ["mdm"]},
          {"required": ["content_available"], "properties": {"content_available": {"enum": [true, 1]}}}
        ],
        "description": "A campaign: template or inline alert, deep link, APNs fields and devices (docs/http-api.md has every field). Each member's own shape is stated here; rules between members, and those that need the gateway's configuration, are checked by the gateway and answered 422 validationFailed with a pointer each: a template that exists and gets every placeholder, a link the route table accepts, what each push type needs or forbids, something to send, send_at not in the past, confirm_devices equal to the count, the body within APNs' size limit.",
        "properties": {
          "template": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$", "description": "A template's name (GET /v1/templates); not with alert."},
          "locale": {"type": "string", "pattern": "^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$", "description": "The template's language to use, e.g. pl-PL (falls back to pl, then the default)."},
          "variables": {"$ref": "#/components/schemas/Variables"},
          "alert": {"description": "The alert's body as a string, or Apple's alert dictionary.", "oneOf": [{"type": "string"}, {"$ref": "#/components/schemas/InlineAlert"}]},
          "deeplink": {"type": "string", "minLength": 1, "description": "A link the route table accepts; sent canonicalised."},
          "push_type": {"enum": ["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets", "controls"]},
          "priority": {"enum": [10, 5, 1]},
          "expiration": {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 9223372036854775807, "description": "UNIX seconds."}, {"type": "string", "format": "date-time"}]},
          "collapse_id": {"allOf": [{"$ref": "#/components/schemas/PlainText"}], "maxLength": 64, "pattern": "^[^ \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000](?:.*[^ \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000])?$", "description": "At most 64 bytes (UTF-8), no whitespace at either end (an HTTP header value cannot carry it)."},
          "thread_id": {"$ref": "#/components/schemas/PlainText"},
          "category": {"$ref": "#/components/schemas/PlainText"},
          "badge": {"type": "integer", "minimum": 0, "maximum": 2147483647},
          "sound": {"oneOf": [{"$ref": "#/components/schemas/PlainText"}, {"type": "object", "required": ["name"], "additionalProperties": false, "properties": {
            "critical": {"$ref": "#/components/schemas/Flag"}, "name": {"$ref": "#/components/schemas/PlainText"}, "volume": {"type": "number", "minimum": 0, "maximum": 1}}}]},
          "interruption_level": {"enum": ["passive", "active", "time-sensitive", "critical"]},
          "relevance_score": {"type": "number", "minimum": 0, "maximum": 1},
          "mutable_content": {"$ref": "#/components/schemas/Flag"},
          "content_available": {"$ref": "#/components/schemas/Flag"},
          "target_content_id": {"$ref": "#/components/schemas/PlainText"},
          "data": {"type": "object", "description": "Custom keys for the app, next to aps (numbers finite as doubles, integers within ±2^53).", "propertyNames": {"not": {"enum": ["aps", "deeplink", "route"]}}},
          "devices": {
            "type": "array",
            "minItems": 1,
            "items": {
              "oneOf": [
                {"$ref": "#/components/schemas/TokenInput"},
                {"type": "object", "required": ["token"], "additionalProperties": false, "properties": {"token": {"$ref": "#/components/schemas/TokenInput"}, "variables": {"$ref": "#/components/schemas/Variables"}}}
              ]
            }
          },
          "truncate": {"type": "boolean"},
          "dry_run": {"type": "boolean"},
          "send_at": {"type": "string", "format": "date-time", "description": "RFC 3339 with Z or an offset: nothing is sent before. More than 60 s in the past: 422 scheduleInPast."},
          "expires_at": {"type": "string", "format": "date-time", "description": "Devices not sent by then end expired instead of being sent late. Past, or not after send_at: 422."},
          "confirm_devices": {"type": "integer", "minimum": 1, "maximum": 2147483647, "description": "The campaign's device count. Required (else 422 confirmationRequired) when it has more devices than guard.confirmAbove; when given it must be the count."},
          "lane": {"enum": ["transactional", "bulk"], "description": "The outbox lane (not APNs' priority). Transactional is served first; bulk keeps a quarter of every claim while both wait. Default: transactional up to lanes.transactionalMaxDevices devices (100), else bulk."},
          "rate_per_second": {"type": "number", "minimum": 0.001, "maximum": 1000000, "description": "At most this many of the campaign's devices sent per second (over every process sharing the storage)."},
          "app": {"allOf": [{"$ref": "#/components/schemas/PlainText"}], "description": "The app the campaign is for (GET /v1/apps); optional when the key may use one app. Its route table, templates, topic and credentials apply. Unknown or not the key's: 404 unknownApp."},
          "environment": {"enum": ["production", "sandbox"], "description": "The APNs environment, when the app allows both (apns.environments); default the app's apns.environment."},
          "channel": {"allOf": [{"$ref": "#/components/schemas/ChannelId"}], "description": "Instead of devices: a broadcast channel id (standard base64, as POST /v1/channels answered it). The campaign is one broadcast request (POST /4/broadcasts/apps/<bundle id> with apns-channel-id) to every Live Activity subscribed to the channel: push_type liveactivity (implied), an update or end, priority 10, 5 or 1, no collapse_id, no devices."},
          "mdm": {"type": "string", "minLength": 1, "description": "push_type mdm (implied): the device's PushMagic; {{placeholders}} take each device's variables. The body is {\"mdm\": …} and nothing else."},
          "live_activity": {
            "type": "object",
            "description": "An ActivityKit push (push_type liveactivity, implied): start, update or end a Live Activity. Apple's rules are checked locally (docs/payloads.md#live-activities-push_type-liveactivity).",
            "required": ["event"],
            "additionalProperties": false,
            "properties": {
              "event": {"enum": ["start", "update", "end"]},
              "content_state": {"type": "object", "description": "The app's Activity.ContentState. Required for start and update."},
              "timestamp": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "format": "date-time"}], "description": "Default: send_at, else when the campaign is planned."},
              "stale_date": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "format": "date-time"}], "description": "start and update; after timestamp (422 liveActivityDateOrder otherwise: with timestamp left out, a stale date in the past)."},
              "dismissal_date": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "format": "date-time"}], "description": "end only; at most four hours after timestamp."},
              "relevance_score": {"type": "number", "minimum": 0},
              "attributes_type": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "maxLength": 256, "description": "start only (required): the app's ActivityAttributes type."},
              "attributes": {"type": "object", "description": "start only (required)."},
              "input_push_token": {"enum": [true, false, 0, 1], "description": "start only: ask for an update token (iOS 18)."},
              "input_push_channel": {"type": "string", "description": "start only: a broadcast channel id (base64) to listen on (iOS 18); not with input_push_token."}
            }
          }
        }
      },
      "Readiness": {"type": "object", "required": ["checks", "status"], "additionalProperties": false, "properties": {
        "checks": {"type": "object", "description": "Each check: ok, or why not. A check that does not block (apns_sending, apns_apps, segments: campaigns a stored segment that does not decode failed in the last hour) shows its reason while the status stays ready.", "additionalProperties": {"type": "string"}},
        "status": {"enum": ["ready", "not ready"]}}},
      "ValueType": {"description": "A parameter's type: a named one, or the list of allowed values.",
                    "oneOf": [{"enum": ["int", "uuid", "slug", "string"]}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]},
      "RouteTable": {
        "type": "object",
        "required": ["app", "hosts", "routes", "fingerprint"],
        "additionalProperties": false,
        "properties": {
          "app": {"type": "object", "required": ["teamId", "bundleId"], "additionalProperties": false,
                  "properties": {"teamId": {"type": "string"}, "bundleId": {"type": "string"}, "scheme": {"type": "string"}}},
          "hosts": {"type": "array", "minItems": 1, "items": {"type": "string"}},
          "passthroughQuery": {"type": "array", "items": {"type": "string"}},
          "routes": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["name", "path"], "additionalProperties": false, "properties": {
            "name": {"type": "string"}, "path": {"type": "string"},
            "params": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/ValueType"}},
            "query": {"type": "object", "additionalProperties": {"oneOf": [{"$ref": "#/components/schemas/ValueType"},
              {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {"type": {"$ref": "#/components/schemas/ValueType"}, "required": {"type": "boolean"}}}]}}}}},
          "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"}
        }
      },
      "InlineAlert": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": false,
        "description": "Apple's alert dictionary; each *-loc-args needs its *-loc-key.",
        "properties": {
          "title": {"type": "string"}, "subtitle": {"type": "string"}, "body": {"type": "string"},
          "title-loc-key": {"$ref": "#/components/schemas/PlainText"}, "title-loc-args": {"type": "array", "items": {"type": "string"}},
          "subtitle-loc-key": {"$ref": "#/components/schemas/PlainText"}, "subtitle-loc-args": {"type": "array", "items": {"type": "string"}},
          "loc-key": {"$ref": "#/components/schemas/PlainText"}, "loc-args": {"type": "array", "items": {"type": "string"}},
          "launch-image": {"$ref": "#/components/schemas/PlainText"}
        },
        "dependentRequired": {"title-loc-args": ["title-loc-key"], "subtitle-loc-args": ["subtitle-loc-key"], "loc-args": ["loc-key"]}
      }
    },
    "parameters": {
      "CampaignID": {"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
                     "description": "The campaign's id (the id of POST /v1/campaigns's answer). An unknown one is 404."}
    },
    "responses": {
      "Problem": {"description": "An error.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "CampaignSummary": {"description": "The campaign as it is now.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CampaignSummary"}}}},
      "CampaignFinished": {"description": "The campaign has finished (completed, cancelled or expired): campaignFinished, naming its state.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "PartReceipt": {"description": "The part as stored: 201 now, 200 (Idempotent-Replayed: true) before, with the same body.", "content": {"application/json": {"schema": {"type": "object",
        "required": ["id", "part", "first_index", "devices", "skipped", "replayed"], "additionalProperties": false, "properties": {
        "id": {"type": "string"}, "part": {"type": "integer", "minimum": 1, "maximum": 1000000},
        "first_index": {"type": "integer", "minimum": 0, "description": "The campaign index of the part's first device (its results are at first_index … first_index + devices - 1)."},
        "devices": {"type": "integer", "minimum": 1}, "skipped": {"type": "integer", "minimum": 0, "description": "Devices whose token is dead (not sent)."},
        "replayed": {"type": "boolean"}
      }}}}}
    }
  },
  "paths": {
    "/v1/apps": {
      "get": {
        "operationId": "apps.list",
        "summary": "The apps this key may use (every app for an admin key, or with no keys configured).",
        "responses": {
          "200": {"description": "The apps.", "content": {"application/json": {"schema": {"type": "object", "required": ["apps"], "additionalProperties": false, "properties": {
            "apps": {"type": "array", "items": {"type": "object", "required": ["name", "bundle_id", "hosts", "scheme", "app_id", "team_id", "key_id", "environment", "environments", "routes", "fingerprint"], "additionalProperties": false, "properties": {
              "name": {"type": "string"}, "bundle_id": {"type": "string"}, "hosts": {"type": "array", "items": {"type": "string"}},
              "scheme": {"type": ["string", "null"]}, "app_id": {"type": "string"}, "team_id": {"type": ["string", "null"]}, "key_id": {"type": ["string", "null"]},
              "environment": {"enum": ["production", "sandbox"]}, "environments": {"type": "array", "items": {"enum": ["production", "sandbox"]}},
              "routes": {"type": "integer", "minimum": 1}, "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"}
            }}}
          }}}},
            "links": {
              "AppLinksCheck": {"operationId": "apps.links.check", "parameters": {"app": "$response.body#/apps/0/name"}},
              "AppNotificationsPreview": {"operationId": "apps.notifications.preview", "parameters": {"app": "$response.body#/apps/0/name"}},
              "AppTemplatesList": {"operationId": "apps.templates.list", "parameters": {"app": "$response.body#/apps/0/name"}},
              "AppRoutes": {"operationId": "apps.routes", "parameters": {"app": "$response.body#/apps/0/name"}},
              "AppTokensDead": {"operationId": "apps.tokens.dead", "parameters": {"app": "$response.body#/apps/0/name"}},
              "AppTokensRegister": {"operationId": "apps.tokens.register", "parameters": {"app": "$response.body#/apps/0/name"}}
            }},
          "401": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/links/check": {
      "post": {
        "operationId": "links.check",
        "summary": "Check and canonicalise deep links against the route table.",
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"oneOf": [
            {"type": "object", "required": ["link"], "additionalProperties": false, "properties": {"link": {"type": "string"}}},
            {"type": "object", "required": ["links"], "additionalProperties": false, "properties": {"links": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 1000}}}
          ]}}}
        },
        "responses": {
          "200": {"description": "The canonicaliser's answer (ok true or false).", "content": {"application/json": {"schema": {"oneOf": [
            {"$ref": "#/components/schemas/LinkResult"},
            {"type": "object", "required": ["results", "accepted", "rejected"], "additionalProperties": false, "properties": {"results": {"type": "array", "items": {"$ref": "#/components/schemas/LinkResult"}, "minItems": 1, "maxItems": 1000}, "accepted": {"type": "integer", "minimum": 0}, "rejected": {"type": "integer", "minimum": 0}}}
          ]}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/notifications/preview": {
      "post": {
        "operationId": "notifications.preview",
        "summary": "The exact APNs requests a campaign would send, as `pushgate preview --json` prints them.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Campaign"}}}},
        "responses": {
          "200": {"description": "The preview: the first 3 devices' exact requests, each with its alert texts (where each came from, its lines on an iPhone), warnings in words, the canonical link and the Simulator file.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Preview"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/templates": {
      "get": {
        "operationId": "templates.list",
        "summary": "The templates a campaign can name: description, push type, locales, link pattern, and each placeholder with its description.",
        "responses": {
          "200": {"description": "Every template in the templates folder; files that do not parse are listed under invalid.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TemplateList"}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns": {
      "post": {
        "operationId": "campaigns.create",
        "summary": "Accept a campaign. The 202 is sent only after the campaign and every device row are committed to storage; the notifications are sent in the background, across restarts.",
        "parameters": [
          {"name": "Idempotency-Key", "in": "header", "required": false, "schema": {"type": "string", "pattern": "^[!-~]{1,255}$"},
           "description": "The same key with a byte-identical body answers with the original campaign (no new sends); with a different body, 409. Kept for storage.idempotencyRetentionHours."},
          {"name": "parts", "in": "query", "required": false, "schema": {"const": "true"},
           "description": "The devices follow in parts (PUT /v1/campaigns/{id}/parts/{part}), for a campaign bigger than one request: the body is the campaign without devices (application/json; no confirm_devices, no channel), answered 201 with the campaign in status filling; nothing is sent before POST /v1/campaigns/{id}/start."}
        ],
        "requestBody": {"required": true, "content": {
          "application/json": {"schema": {"$ref": "#/components/schemas/Campaign"},
                               "examples": {"inline": {"summary": "An inline alert to one device.", "value": {"alert": {"title": "Your order is ready", "body": "Pick it up at the counter."},
                                                                                                   "devices": ["8a2f0c1d9e4b7f3a2c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3"]}}}},
          "application/x-ndjson": {"schema": {"type": "string"}, "description": "For big campaigns: the campaign without devices on the first line, then one device token per line (blank lines and # comments skipped)."}
        }},
        "responses": {
          "201": {
            "description": "With ?parts=true: the campaign, in status filling, waiting for its parts.",
            "headers": {"Location": {"required": true, "schema": {"type": "string", "pattern": "^/v1/campaigns/[0-9a-f-]{36}$"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CampaignSummary"}}},
            "links": {
              "PutPart": {"operationId": "campaigns.parts.put", "parameters": {"id": "$response.body#/id"}, "description": "Its devices, in parts."},
              "StartCampaign": {"operationId": "campaigns.start", "parameters": {"id": "$response.body#/id"}}
            }
          },
          "200": {
            "description": "With ?parts=true and an Idempotency-Key seen before with the same request: that campaign as it is now (Idempotent-Replayed: true).",
            "headers": {"Location": {"required": true, "schema": {"type": "string", "pattern": "^/v1/campaigns/[0-9a-f-]{36}$"}},
                        "Idempotent-Replayed": {"required": true, "schema": {"const": "true"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CampaignSummary"}}}
          },
          "202": {
            "description": "Accepted (or replayed for a known Idempotency-Key, with the header Idempotent-Replayed: true).",
            "headers": {"Location": {"required": true, "schema": {"type": "string", "pattern": "^/v1/campaigns/[0-9a-f-]{36}$"}},
                        "Idempotent-Replayed": {"schema": {"const": "true"}}},
            "content": {"application/json": {"schema": {"type": "object", "required": ["id", "status_url", "devices", "skipped", "dry_run", "replayed"], "additionalProperties": false, "properties": {
              "id": {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
              "status_url": {"type": "string", "pattern": "^/v1/campaigns/[0-9a-f-]{36}$"}, "devices": {"type": "integer", "minimum": 1},
              "skipped": {"type": "integer", "minimum": 0, "description": "Devices whose token is dead (not sent)."},
              "dry_run": {"type": "boolean"}, "replayed": {"type": "boolean"}
            }}}},
            "links": {
              "GetCampaign": {"operationId": "campaigns.get", "parameters": {"id": "$response.body#/id"}, "description": "Its progress."},
              "PauseCampaign": {"operationId": "campaigns.pause", "parameters": {"id": "$response.body#/id"}},
              "ResumeCampaign": {"operationId": "campaigns.resume", "parameters": {"id": "$response.body#/id"}},
              "CancelCampaign": {"operationId": "campaigns.cancel", "parameters": {"id": "$response.body#/id"}}
            }
          },
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "409": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "get": {
        "operationId": "campaigns.list",
        "summary": "Campaigns, newest first, with counts by state.",
        "parameters": [
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
          {"name": "before", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 9223372036854775807}, "description": "From a previous page's next link."},
          {"name": "app", "in": "query", "schema": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,31}$"}, "description": "Only this app's campaigns (an app that has none gives an empty page)."},
          {"name": "status", "in": "query", "schema": {"type": "string", "pattern": "^(?:scheduled|sending|paused|completed|cancelled|expired|filling)(?:,(?:scheduled|sending|paused|completed|cancelled|expired|filling))*$"},
           "description": "Only campaigns in these states, comma-separated (sending,paused). A request reads at most 1000 campaigns: a page may then hold fewer than limit, and next goes on from where it stopped."}
        ],
        "responses": {
          "200": {"description": "A page of campaigns.", "content": {"application/json": {"schema": {"type": "object", "required": ["campaigns", "next"], "additionalProperties": false, "properties": {
            "campaigns": {"type": "array", "maxItems": 1000, "items": {"$ref": "#/components/schemas/CampaignSummary"}},
            "next": {"type": ["string", "null"], "pattern": "^/v1/campaigns[?]limit=[0-9]+&before=[0-9]+(?:&app=[a-z][a-z0-9_]*)?(?:&status=[a-z,]+)?$", "description": "The next page, with the same filters; null on the last."}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}": {
      "get": {
        "operationId": "campaigns.get",
        "summary": "Progress and per-device results, paged.",
        "parameters": [
          {"$ref": "#/components/parameters/CampaignID"},
          {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 9223372036854775, "default": 1}},
          {"name": "per_page", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
          {"name": "state", "in": "query", "schema": {"type": "string", "pattern": "^(?:pending|in-flight|retrying|delivered|failed|unregistered|skipped|dry-run|cancelled|expired)(?:,(?:pending|in-flight|retrying|delivered|failed|unregistered|skipped|dry-run|cancelled|expired))*$"}, "description": "Only devices in these states, comma-separated (failed, or failed,unregistered); an unknown name is 400 invalidQuery."}
        ],
        "responses": {
          "200": {"description": "The campaign.", "content": {"application/json": {"schema": {"allOf": [{"$ref": "#/components/schemas/CampaignFields"}], "type": "object",
            "required": ["page", "per_page", "results"], "unevaluatedProperties": false, "properties": {
            "page": {"type": "integer", "minimum": 1},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 1000},
            "results": {"type": "array", "maxItems": 1000, "items": {"type": "object", "required": ["index", "token", "state", "attempts"], "additionalProperties": false, "properties": {
              "index": {"type": "integer", "minimum": 0}, "token": {"$ref": "#/components/schemas/Token"},
              "state": {"enum": ["pending", "in-flight", "retrying", "delivered", "failed", "unregistered", "skipped", "dry-run", "cancelled", "expired"]},
              "attempts": {"type": "integer", "minimum": 0},
              "status": {"type": "integer"}, "reason": {"$ref": "#/components/schemas/DeviceReason"}, "apns_id": {"type": "string"}, "timestamp_ms": {"type": "integer"},
              "apns_unique_id": {"type": "string", "description": "The sandbox's apns-unique-id (Apple sends it in the development environment only): look the notification up in the Push Notifications Console's delivery log."},
              "environment": {"enum": ["production", "sandbox"], "description": "The APNs environment the answer came from (on results APNs answered)."},
              "next_attempt_at": {"type": "string", "format": "date-time"}
            }}}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/reasons": {
      "get": {
        "operationId": "campaigns.reasons",
        "summary": "The campaign's devices by state and APNs reason, most first (devices without a reason are left out). One pass over the campaign's device rows: ask when needed rather than on every poll.",
        "parameters": [
          {"$ref": "#/components/parameters/CampaignID"},
          {"name": "state", "in": "query", "schema": {"type": "string", "pattern": "^(?:pending|in-flight|retrying|delivered|failed|unregistered|skipped|dry-run|cancelled|expired)(?:,(?:pending|in-flight|retrying|delivered|failed|unregistered|skipped|dry-run|cancelled|expired))*$"}, "description": "The states counted, comma-separated (default failed,unregistered,retrying); an unknown name is 400 invalidQuery."}
        ],
        "responses": {
          "200": {"description": "Counts by reason.", "content": {"application/json": {"schema": {"type": "object", "required": ["id", "reasons"], "additionalProperties": false, "properties": {
            "id": {"type": "string"},
            "reasons": {"type": "array", "items": {"type": "object", "required": ["state", "reason", "count"], "additionalProperties": false, "properties": {
              "state": {"enum": ["pending", "in-flight", "retrying", "delivered", "failed", "unregistered", "skipped", "dry-run", "cancelled", "expired"]},
              "reason": {"$ref": "#/components/schemas/DeviceReason"},
              "count": {"type": "integer", "minimum": 1}
            }}}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/message": {
      "get": {
        "operationId": "campaigns.message",
        "summary": "What the campaign sent: its push type, topic, priority, expiration, collapse id and the APNs body every device without a body of its own got (a template's per-device texts are in no shared body).",
        "parameters": [{"$ref": "#/components/parameters/CampaignID"}],
        "responses": {
          "200": {"description": "The campaign's message.", "content": {"application/json": {"schema": {"type": "object",
            "required": ["id", "app", "push_type", "topic", "priority", "expiration", "collapse_id", "channel", "payload"], "additionalProperties": false, "properties": {
            "id": {"type": "string"},
            "app": {"type": ["string", "null"]},
            "push_type": {"type": "string"},
            "topic": {"type": "string"},
            "priority": {"type": "integer"},
            "expiration": {"type": ["integer", "null"], "description": "apns-expiration (UNIX seconds; 0: deliver once or never)."},
            "collapse_id": {"type": ["string", "null"]},
            "channel": {"type": ["string", "null"], "description": "A channel campaign's broadcast channel id."},
            "payload": {"type": ["object", "null"], "description": "The APNs body (aps, deeplink, route, data members)."}
          }}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/pause": {
      "post": {
        "operationId": "campaigns.pause",
        "summary": "Pause: nothing new is sent until resumed (what is in flight finishes). Pausing a paused campaign changes nothing (200).",
        "parameters": [{"$ref": "#/components/parameters/CampaignID"}],
        "responses": {
          "200": {"$ref": "#/components/responses/CampaignSummary"}, "409": {"$ref": "#/components/responses/CampaignFinished"},
          "401": {"$ref": "#/components/responses/Problem"}, "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/resume": {
      "post": {
        "operationId": "campaigns.resume",
        "summary": "Resume a paused campaign. Resuming a running one changes nothing (200).",
        "parameters": [{"$ref": "#/components/parameters/CampaignID"}],
        "responses": {
          "200": {"$ref": "#/components/responses/CampaignSummary"}, "409": {"$ref": "#/components/responses/CampaignFinished"},
          "401": {"$ref": "#/components/responses/Problem"}, "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/cancel": {
      "post": {
        "operationId": "campaigns.cancel",
        "summary": "Cancel: no new sends from now on (what is in flight finishes); every device not sent ends cancelled and is counted in not_sent. Survives restarts; cancelling a cancelled campaign changes nothing (200).",
        "parameters": [{"$ref": "#/components/parameters/CampaignID"}],
        "responses": {
          "200": {"$ref": "#/components/responses/CampaignSummary"}, "409": {"$ref": "#/components/responses/CampaignFinished"},
          "401": {"$ref": "#/components/responses/Problem"}, "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/parts/{part}": {
      "put": {
        "operationId": "campaigns.parts.put",
        "summary": "One part of the devices of a campaign created with ?parts=true: one device token per line, within server.maxBodyBytes. A part's devices take the next indices, in the order parts arrive (any part numbers, any order). Checked as a device list is (every line a token, none twice in the part; the first 20 problems listed by line); dead tokens are skipped. The same part again with the same body answers as before (200, nothing stored); with another body, 409 partConflict.",
        "parameters": [
          {"$ref": "#/components/parameters/CampaignID"},
          {"name": "part", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 1000000}, "description": "The part's number, 1 to 1000000 (the key of its idempotency, not its position)."}
        ],
        "requestBody": {"required": true, "content": {
          "application/x-ndjson": {"schema": {"type": "string"}, "description": "One device token per line (blank lines and # comments skipped)."}
        }},
        "responses": {
          "201": {"$ref": "#/components/responses/PartReceipt"},
          "200": {"$ref": "#/components/responses/PartReceipt"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "409": {"description": "partConflict: the part was stored before with another body; notFilling: the campaign takes no parts (started, or not created with ?parts=true).", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns/{id}/start": {
      "post": {
        "operationId": "campaigns.start",
        "summary": "Send a campaign filled in parts: from now on it is sent as any other (its lane chosen by its device count). More devices than guard.confirmAbove need confirm_devices equal to the count (else 422 confirmationRequired). Starting a started campaign changes nothing (200).",
        "parameters": [{"$ref": "#/components/parameters/CampaignID"}],
        "requestBody": {"required": false, "content": {
          "application/json": {"schema": {"type": "object", "additionalProperties": false, "properties": {
            "confirm_devices": {"type": "integer", "minimum": 1, "maximum": 2147483647, "description": "The campaign's device count (skipped dead tokens included), as the parts' receipts add up."}
          }}}
        }},
        "responses": {
          "200": {"$ref": "#/components/responses/CampaignSummary"},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "409": {"description": "campaignFinished: the campaign was cancelled (or expired) while filling.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live-activities/tokens": {
      "post": {
        "operationId": "liveActivities.tokens",
        "summary": "The app reports a Live Activity token: its push-to-start token, or an activity's update token.",
        "description": "A token new to an activity that has storage.liveActivityTokensPerActivity update tokens already, or new to an app that has storage.liveActivityTokensPerApp tokens, is refused: 422 registryFull, errors[0] activityTokenLimit (pointer /activity_id) or appTokenLimit (pointer /token). A token reported again only renews its time. Update tokens not reported again for storage.liveActivityTokenRetentionHours are removed.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LiveActivityToken"}}}},
        "responses": {
          "201": {"description": "Registered.", "content": {"application/json": {"schema": {"type": "object", "required": ["app", "kind", "token", "activity_id", "registered_at_ms", "was_dead", "replaced"], "additionalProperties": false, "properties": {
            "app": {"type": "string"}, "kind": {"enum": ["push-to-start", "update"]}, "token": {"$ref": "#/components/schemas/Token"},
            "activity_id": {"oneOf": [{"$ref": "#/components/schemas/ActivityID"}, {"type": "null"}]},
            "registered_at_ms": {"type": "integer"}, "was_dead": {"type": "boolean", "description": "APNs had called it dead; it is alive again."},
            "replaced": {"type": "boolean", "description": "The token named by replaces was registered and is removed."}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live-activities/{activity}/update": {
      "post": {
        "operationId": "liveActivities.update",
        "summary": "Update the activity on every device: a liveactivity campaign to each live update token it has, through the outbox.",
        "parameters": [{"name": "activity", "in": "path", "required": true, "schema": {"$ref": "#/components/schemas/ActivityID"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LiveActivityUpdate"}}}},
        "responses": {
          "202": {"$ref": "#/paths/~1v1~1campaigns/post/responses/202"},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live-activities/{activity}/end": {
      "post": {
        "operationId": "liveActivities.end",
        "summary": "End the activity on every device: a liveactivity campaign (event end) to each live update token it has, through the outbox.",
        "parameters": [{"name": "activity", "in": "path", "required": true, "schema": {"$ref": "#/components/schemas/ActivityID"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LiveActivityEnd"}}}},
        "responses": {
          "202": {"$ref": "#/paths/~1v1~1campaigns/post/responses/202"},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/tokens/{token}/register": {
      "post": {
        "operationId": "tokens.register",
        "summary": "The app reported this token again: campaigns send to it again if it was marked dead before now.",
        "parameters": [{"name": "token", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^(?:[0-9a-fA-F]{2}){32,100}$"},
                        "description": "The device token: 64 to 200 hex digits (an even number), either case."}],
        "responses": {
          "200": {"description": "Registered.", "content": {"application/json": {"schema": {"type": "object", "required": ["token", "registered_at_ms", "was_dead"], "additionalProperties": false, "properties": {
            "token": {"$ref": "#/components/schemas/Token"}, "registered_at_ms": {"type": "integer"}, "was_dead": {"type": "boolean"},
            "dead_since_ms": {"type": "integer", "description": "When it was dead before (Apple's timestamp); only when was_dead."}, "dead_reason": {"type": "string"}
          }}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/tokens/dead": {
      "get": {
        "operationId": "tokens.dead",
        "summary": "Tokens APNs answered 410 for (and not registered again since), by Apple's timestamp.",
        "parameters": [
          {"name": "since", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 9223372036854775807, "default": 0}, "description": "Apple timestamp, ms since 1970; inclusive."},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
          {"name": "cursor", "in": "query", "schema": {"type": "string", "pattern": "^[0-9]{1,18}-[0-9a-f]{1,200}$"}, "description": "A previous page's next_cursor."}
        ],
        "responses": {
          "200": {"description": "A page of dead tokens.", "content": {"application/json": {"schema": {"type": "object", "required": ["tokens", "next_cursor", "next"], "additionalProperties": false, "properties": {
            "tokens": {"type": "array", "maxItems": 1000, "items": {"type": "object", "required": ["token", "timestamp_ms", "reason", "recorded_at"], "additionalProperties": false, "properties": {
              "token": {"$ref": "#/components/schemas/Token"}, "timestamp_ms": {"type": "integer"}, "reason": {"type": "string"}, "recorded_at": {"type": "string", "format": "date-time"}
            }}},
            "next_cursor": {"type": ["string", "null"], "pattern": "^[0-9]{1,18}-[0-9a-f]{1,200}$"}, "next": {"type": ["string", "null"]}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/routes": {
      "get": {
        "operationId": "routes",
        "summary": "The route table the gateway checks links against.",
        "responses": {
          "200": {"description": "The route table (config/routes.json format) plus its fingerprint, the SHA-256 a generated Swift router carries as tableFingerprint.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RouteTable"}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/.well-known/apple-app-site-association": {
      "get": {
        "operationId": "aasa",
        "summary": "The apple-app-site-association of the request's Host: one details entry per app whose route table lists the host; served directly, never redirected.",
        "security": [],
        "responses": {
          "200": {"description": "The AASA file.", "content": {"application/json": {"schema": {"type": "object", "required": ["applinks"], "properties": {
            "applinks": {"type": "object", "required": ["details"], "additionalProperties": false, "properties": {"details": {"type": "array", "minItems": 1, "items": {
              "type": "object", "required": ["appIDs", "components"], "additionalProperties": false, "properties": {
                "appIDs": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                "components": {"type": "array", "items": {"type": "object", "required": ["/"], "additionalProperties": false, "properties": {
                  "/": {"type": "string"}, "?": {"type": "object", "additionalProperties": {"type": "string"}}, "exclude": {"type": "boolean"}, "comment": {"type": "string"}}}}}}}}}}}}}},
          "404": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/healthz": {
      "get": {
        "operationId": "healthz",
        "summary": "The process is up.",
        "security": [],
        "responses": {"200": {"description": "Up.", "content": {"application/json": {"schema": {"type": "object", "required": ["status"], "additionalProperties": false, "properties": {"status": {"const": "ok"}}}}}}}
      }
    },
    "/readyz": {
      "get": {
        "operationId": "readyz",
        "summary": "\#(readinessSummary)",
        "security": [],
        "responses": {
          "200": {"description": "Ready.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}},
          "503": {"description": "Not ready; each failing check says why.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}}
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "metrics",
        "summary": "\#(metricsSummary)",
        "security": [],
        "responses": {"200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
      }
    },
    "/openapi.json": {
      "get": {
        "operationId": "openapi",
        "summary": "This document.",
        "security": [],
        "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object", "required": ["openapi", "info", "servers", "security", "components", "paths"], "additionalProperties": false,
          "properties": {"openapi": {"const": "3.1.0"}, "info": {"type": "object"}, "servers": {"type": "array"}, "security": {"type": "array"}, "components": {"type": "object"}, "paths": {"type": "object"}}}}}}}
      }
    },
    "/ui": {
      "get": {
        "operationId": "ui.page",
        "summary": "The preview page (docs/ui.md): compose a campaign and see it as an iPhone would show it, next to the exact request. Static, embedded in the binary; it calls this API with the key the person enters.",
        "security": [],
        "responses": {"200": {"description": "The page, with a strict Content-Security-Policy.", "content": {"text/html": {"schema": {"type": "string"}}}}}
      }
    },
    "/ui/page.css": {
      "get": {
        "operationId": "ui.stylesheet",
        "summary": "The preview page's stylesheet.",
        "security": [],
        "responses": {"200": {"description": "CSS.", "content": {"text/css": {"schema": {"type": "string"}}}}}
      }
    },
    "/ui/page.js": {
      "get": {
        "operationId": "ui.script",
        "summary": "The preview page's script.",
        "security": [],
        "responses": {"200": {"description": "JavaScript.", "content": {"text/javascript": {"schema": {"type": "string"}}}}}
      }
    }
  }
}
"""#
}
