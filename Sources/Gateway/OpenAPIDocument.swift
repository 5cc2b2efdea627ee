/// The API's OpenAPI 3.1 description, served at `GET /openapi.json`. A test checks that
/// every route the router knows is described here and nothing else is.
enum OpenAPIDocument {
    static let text = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "pushgate",
    "version": "0.1.0",
    "description": "Push-notification gateway for iOS apps: verified deep links, exact APNs payloads, HTTP/2 delivery. Every error is application/problem+json (RFC 9457) with a stable code."
  },
  "servers": [{"url": "http://127.0.0.1:8080"}],
  "security": [{"bearer": []}],
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "description": "An API key; the configuration stores its SHA-256. Not required when no keys are configured and the server listens on loopback only."}
    },
    "schemas": {
      "Problem": {
        "type": "object",
        "required": ["type", "title", "status", "code", "detail"],
        "properties": {
          "type": {"type": "string", "examples": ["urn:pushgate:problem:hostNotAllowed"]},
          "title": {"type": "string"},
          "status": {"type": "integer"},
          "code": {"type": "string", "description": "Stable machine-readable code."},
          "detail": {"type": "string"},
          "errors": {
            "type": "array",
            "items": {
              "type": "object",
              "required": ["pointer", "code", "detail"],
              "properties": {
                "pointer": {"type": "string", "description": "RFC 6901 JSON pointer into the request body ('?name' for a query parameter)."},
                "code": {"type": "string"},
                "detail": {"type": "string"}
              }
            }
          }
        }
      },
      "LinkResult": {
        "oneOf": [
          {
            "type": "object",
            "required": ["ok", "canonical", "route", "params", "query"],
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
            "properties": {
              "ok": {"const": false},
              "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}}
              }
            }
          }
        ]
      },
      "Campaign": {
        "type": "object",
        "description": "A campaign: template or inline alert, deep link, APNs fields and devices. See the README for every field.",
        "properties": {
          "template": {"type": "string"},
          "locale": {"type": "string"},
          "variables": {"type": "object", "additionalProperties": {"type": "string"}},
          "alert": {"type": "object"},
          "deeplink": {"type": "string"},
          "push_type": {"enum": ["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets"]},
          "priority": {"enum": [10, 5, 1]},
          "expiration": {"oneOf": [{"type": "integer"}, {"type": "string", "format": "date-time"}]},
          "collapse_id": {"type": "string", "maxLength": 64},
          "thread_id": {"type": "string"},
          "category": {"type": "string"},
          "badge": {"type": "integer"},
          "sound": {"oneOf": [{"type": "string"}, {"type": "object"}]},
          "interruption_level": {"enum": ["passive", "active", "time-sensitive", "critical"]},
          "relevance_score": {"type": "number", "minimum": 0, "maximum": 1},
          "mutable_content": {"type": "boolean"},
          "content_available": {"type": "boolean"},
          "target_content_id": {"type": "string"},
          "data": {"type": "object"},
          "devices": {
            "type": "array",
            "items": {
              "oneOf": [
                {"type": "string", "description": "Hex device token."},
                {"type": "object", "required": ["token"], "properties": {"token": {"type": "string"}, "variables": {"type": "object"}}}
              ]
            }
          },
          "truncate": {"type": "boolean"},
          "dry_run": {"type": "boolean"}
        }
      }
    },
    "responses": {
      "Problem": {"description": "An error.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    }
  },
  "paths": {
    "/v1/links/check": {
      "post": {
        "operationId": "links.check",
        "summary": "Check and canonicalise deep links against the route table.",
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"oneOf": [
            {"type": "object", "required": ["link"], "properties": {"link": {"type": "string"}}},
            {"type": "object", "required": ["links"], "properties": {"links": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 1000}}}
          ]}}}
        },
        "responses": {
          "200": {"description": "The canonicaliser's answer (ok true or false).", "content": {"application/json": {"schema": {"oneOf": [
            {"$ref": "#/components/schemas/LinkResult"},
            {"type": "object", "properties": {"results": {"type": "array", "items": {"$ref": "#/components/schemas/LinkResult"}}, "accepted": {"type": "integer"}, "rejected": {"type": "integer"}}}
          ]}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
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
          "200": {"description": "The preview.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/campaigns": {
      "post": {
        "operationId": "campaigns.create",
        "summary": "Accept a campaign; its notifications are sent in the background.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Campaign"}}}},
        "responses": {
          "202": {
            "description": "Accepted.",
            "headers": {"Location": {"schema": {"type": "string"}}},
            "content": {"application/json": {"schema": {"type": "object", "required": ["id", "status_url", "devices", "dry_run"], "properties": {
              "id": {"type": "string"}, "status_url": {"type": "string"}, "devices": {"type": "integer"}, "dry_run": {"type": "boolean"}
            }}}}
          },
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "415": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
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
          {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}},
          {"name": "per_page", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}
        ],
        "responses": {
          "200": {"description": "The campaign.", "content": {"application/json": {"schema": {"type": "object", "properties": {
            "id": {"type": "string"},
            "status": {"enum": ["queued", "sending", "completed"]},
            "dry_run": {"type": "boolean"},
            "created_at": {"type": "string", "format": "date-time"},
            "finished_at": {"type": ["string", "null"], "format": "date-time"},
            "devices": {"type": "integer"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "page": {"type": "integer"},
            "per_page": {"type": "integer"},
            "results": {"type": "array", "items": {"type": "object", "properties": {
              "index": {"type": "integer"}, "token": {"type": "string"},
              "state": {"enum": ["pending", "delivered", "failed", "unregistered", "dry-run"]},
              "status": {"type": "integer"}, "reason": {"type": "string"}, "apns_id": {"type": "string"}, "timestamp_ms": {"type": "integer"}
            }}}
          }}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/routes": {
      "get": {
        "operationId": "routes",
        "summary": "The route table the gateway checks links against.",
        "responses": {
          "200": {"description": "The route table (config/routes.json format).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/.well-known/apple-app-site-association": {
      "get": {
        "operationId": "aasa",
        "summary": "The apple-app-site-association generated from the route table; served directly, never redirected.",
        "security": [],
        "responses": {"200": {"description": "The AASA file.", "content": {"application/json": {"schema": {"type": "object"}}}}}
      }
    },
    "/healthz": {
      "get": {
        "operationId": "healthz",
        "summary": "The process is up.",
        "security": [],
        "responses": {"200": {"description": "Up.", "content": {"application/json": {"schema": {"type": "object"}}}}}
      }
    },
    "/readyz": {
      "get": {
        "operationId": "readyz",
        "summary": "Configuration loaded, signing key usable.",
        "security": [],
        "responses": {
          "200": {"description": "Ready.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "503": {"description": "Not ready; each failing check says why.", "content": {"application/json": {"schema": {"type": "object"}}}}
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "metrics",
        "summary": "Prometheus text format.",
        "security": [],
        "responses": {"200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
      }
    },
    "/openapi.json": {
      "get": {
        "operationId": "openapi",
        "summary": "This document.",
        "security": [],
        "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}
      }
    }
  }
}
"""#
}
