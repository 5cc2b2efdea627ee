/// The OpenAPI path items of `/v1/channels` (see `ChannelEndpoints`), inserted into the
/// written document before the AASA's path; `withPerAppPaths` copies them under
/// `/v1/apps/{app}`.
extension OpenAPIDocument {
    static func withChannelPaths(_ written: String) -> String {
        guard let anchor = written.firstRange(of: "    \"/.well-known/apple-app-site-association\": {") else { return written }
        var text = written
        text.insert(contentsOf: channelPaths, at: anchor.lowerBound)
        return text
    }

    static let channelPaths = #"""
    "/v1/channels": {
      "get": {
        "operationId": "channels.list",
        "summary": "The app's broadcast channel ids, from Apple's channel management API (GET /1/apps/<bundle id>/all-channels).",
        "parameters": [{"$ref": "#/components/parameters/ChannelEnvironment"}],
        "responses": {
          "200": {"description": "The channel ids.", "content": {"application/json": {"schema": {"type": "object", "required": ["app", "environment", "channels", "request_id"], "additionalProperties": false, "properties": {
            "app": {"type": "string"}, "environment": {"enum": ["sandbox", "production"]},
            "channels": {"type": "array", "items": {"$ref": "#/components/schemas/ChannelId"}},
            "request_id": {"type": ["string", "null"], "description": "Apple's apns-request-id for the request."}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"}, "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}, "502": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "post": {
        "operationId": "channels.create",
        "summary": "Creates a broadcast channel at Apple (POST /1/apps/<bundle id>/channels); answers its id.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["message_storage_policy"], "additionalProperties": false, "properties": {
          "message_storage_policy": {"enum": [0, 1], "description": "Apple's message-storage-policy: 0 no message stored (broadcasts then need apns-expiration 0), 1 the most recent message stored."},
          "environment": {"enum": ["sandbox", "production"], "description": "One of the app's apns.environments; default its apns.environment."}
        }}}}},
        "responses": {
          "201": {"description": "Created.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Channel"}}}},
          "400": {"$ref": "#/components/responses/Problem"}, "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"}, "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"}, "429": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/channels/{channel}": {
      "get": {
        "operationId": "channels.show",
        "summary": "One channel's settings at Apple (GET /1/apps/<bundle id>/channels with apns-channel-id).",
        "parameters": [{"$ref": "#/components/parameters/Channel"}, {"$ref": "#/components/parameters/ChannelEnvironment"}],
        "responses": {
          "200": {"description": "The channel.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Channel"}}}},
          "400": {"$ref": "#/components/responses/Problem"}, "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"}, "429": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "operationId": "channels.delete",
        "summary": "Deletes a channel at Apple (DELETE /1/apps/<bundle id>/channels with apns-channel-id).",
        "parameters": [{"$ref": "#/components/parameters/Channel"}, {"$ref": "#/components/parameters/ChannelEnvironment"}],
        "responses": {
          "200": {"description": "Deleted.", "content": {"application/json": {"schema": {"type": "object", "required": ["app", "environment", "channel_id", "deleted", "request_id"], "additionalProperties": false, "properties": {
            "app": {"type": "string"}, "environment": {"enum": ["sandbox", "production"]}, "channel_id": {"$ref": "#/components/schemas/ChannelId"},
            "deleted": {"const": true}, "request_id": {"type": ["string", "null"]}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"}, "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"}, "429": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },

"""#

    /// Components the channel paths use, inserted at the start of `components.schemas` and
    /// `components.parameters`.
    static func withChannelComponents(_ written: String) -> String {
        var text = written
        if let schemas = text.firstRange(of: "\"schemas\": {\n") {
            text.insert(contentsOf: #"""
      "ChannelId": {"type": "string", "pattern": "^[A-Za-z0-9+/]{2,254}={0,2}$", "maxLength": 256, "description": "A channel id as APNs gives it: standard base64 (docs/channels.md)."},
      "Channel": {"type": "object", "required": ["app", "environment", "channel_id", "message_storage_policy", "push_type", "request_id"], "additionalProperties": false, "properties": {
        "app": {"type": "string"}, "environment": {"enum": ["sandbox", "production"]}, "channel_id": {"$ref": "#/components/schemas/ChannelId"},
        "message_storage_policy": {"enum": [0, 1, null]}, "push_type": {"type": ["string", "null"]},
        "request_id": {"type": ["string", "null"], "description": "Apple's apns-request-id for the request."}
      }},

"""#, at: schemas.upperBound)
        }
        if let parameters = text.firstRange(of: "\"parameters\": {\n") {
            text.insert(contentsOf: #"""
      "Channel": {"name": "channel", "in": "path", "required": true, "schema": {"type": "string", "minLength": 4, "maxLength": 256, "pattern": "^(?:[A-Za-z0-9+_-]{4})*(?:[A-Za-z0-9+_-]{2}==|[A-Za-z0-9+_-]{3}=)?$"},
                  "description": "The channel id, with / written _ (base64url; + may be written -): a / cannot stand in a path segment, even encoded."},
      "ChannelEnvironment": {"name": "environment", "in": "query", "schema": {"enum": ["sandbox", "production"]},
                             "description": "One of the app's apns.environments; default its apns.environment."},

"""#, at: parameters.upperBound)
        }
        return text
    }
}
