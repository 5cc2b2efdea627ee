"""The broadcast side of fake_apns.py: Apple's channel management API and its broadcast send path.

Channel management (Apple: "Sending channel management requests to APNs"), on its own host in
production (api-manage-broadcast[.sandbox].push.apple.com, ports 2196 / 2195); the fake serves
it on its one port, next to the push paths:
  POST   /1/apps/<bundle id>/channels       body {"message-storage-policy": 0|1, "push-type": "LiveActivity"}
                                            -> 201, the new id in apns-channel-id
  GET    /1/apps/<bundle id>/channels       apns-channel-id -> 200 {"message-storage-policy": N, "push-type": "LiveActivity"}
  GET    /1/apps/<bundle id>/all-channels   -> 200 {"channels": ["…", …]}
  DELETE /1/apps/<bundle id>/channels       apns-channel-id -> 204
Broadcast send (Apple: "Sending broadcast push notification requests to APNs"), on the push host:
  POST   /4/broadcasts/apps/<bundle id>     apns-channel-id, apns-push-type: liveactivity -> 200
Every answer carries apns-request-id (the request's own when it sent one). Errors are 400 with
Apple's reasons: MissingChannelId, BadChannelId, ChannelNotRegistered, CannotCreateChannelConfig,
FeatureNotEnabled, MissingPushType, InvalidPushType; a bad message-storage-policy is 400
BadMessageStoragePolicy (Apple documents no reason for it; pushgate checks it before sending).
Channels belong to a bundle id; ids are base64 of 16 random bytes, so some hold "/" and "+".

A broadcast is answered as the script's "tokens" say for its channel id (a 500, then 200),
else with Apple's checks below.

Script members: "channelLimit": N (CannotCreateChannelConfig past N channels of a bundle id,
Apple's is 10,000), "broadcastDisabled": [bundle ids] (FeatureNotEnabled), "channels":
{"<bundle id>": {"<id>": policy}} (channels that exist from the start).
"""
import base64
import json
import os
import re

CHANNEL_RE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


def handles(path):
    return path.startswith("/1/apps/") or path.startswith("/4/broadcasts/")


def bundle_of(path):
    """The bundle id a broadcast-side path names (None when it names none)."""
    parts = path.split("/")
    if path.startswith("/1/apps/") and len(parts) == 5:
        return parts[3] or None
    if path.startswith("/4/broadcasts/apps/") and len(parts) == 5:
        return parts[4] or None
    return None


class Broadcast:
    def __init__(self, script):
        self.limit = script.get("channelLimit", 10000)
        self.disabled = set(script.get("broadcastDisabled", []))
        self.channels = {bundle: dict(ids) for bundle, ids in script.get("channels", {}).items()}
        self.sent = []  # (bundle, channel id, body) of every accepted broadcast

    def channel_problem(self, h, bundle):
        channel = h.get("apns-channel-id")
        if channel is None:
            return "MissingChannelId"
        if len(channel) > 256 or len(channel) % 4 != 0 or not CHANNEL_RE.match(channel):
            return "BadChannelId"
        if channel not in self.channels.get(bundle, {}):
            return "ChannelNotRegistered"
        return None

    def answer(self, h, body):
        """(status, reason or None, extra headers, body bytes) for a request whose provider token verified."""
        path = h.get(":path", "")
        method = h.get(":method")
        bundle = bundle_of(path)
        parts = path.split("/")
        if bundle is None:
            return 404, "BadPath", [], b""
        if bundle in self.disabled:
            return 400, "FeatureNotEnabled", [], b""
        if path.startswith("/4/"):
            if method != "POST":
                return 405, "MethodNotAllowed", [], b""
            return self.broadcast(h, bundle, body)
        resource = parts[4]
        if resource == "all-channels":
            if method != "GET":
                return 405, "MethodNotAllowed", [], b""
            ids = sorted(self.channels.get(bundle, {}))
            return 200, None, [("content-type", "application/json")], json.dumps({"channels": ids}).encode()
        if resource != "channels":
            return 404, "BadPath", [], b""
        if method == "POST":
            try:
                request = json.loads(body) if body else None
            except ValueError:
                request = None
            if not isinstance(request, dict):
                return 400, "BadMessageStoragePolicy", [], b""
            if "push-type" not in request:
                return 400, "MissingPushType", [], b""
            if request.get("push-type") != "LiveActivity":
                return 400, "InvalidPushType", [], b""
            policy = request.get("message-storage-policy")
            if type(policy) is not int or policy not in (0, 1) or set(request) != {"push-type", "message-storage-policy"}:
                return 400, "BadMessageStoragePolicy", [], b""
            owned = self.channels.setdefault(bundle, {})
            if len(owned) >= self.limit:
                return 400, "CannotCreateChannelConfig", [], b""
            channel = base64.b64encode(os.urandom(16)).decode()
            owned[channel] = policy
            return 201, None, [("apns-channel-id", channel)], b""
        if method not in ("GET", "DELETE"):
            return 405, "MethodNotAllowed", [], b""
        problem = self.channel_problem(h, bundle)
        if problem is not None:
            return 400, problem, [], b""
        channel = h["apns-channel-id"]
        if method == "DELETE":
            del self.channels[bundle][channel]
            return 204, None, [], b""
        document = {"message-storage-policy": self.channels[bundle][channel], "push-type": "LiveActivity"}
        return 200, None, [("content-type", "application/json")], json.dumps(document).encode()

    def broadcast(self, h, bundle, body):
        problem = self.channel_problem(h, bundle)
        if problem is not None:
            return 400, problem, [], b""
        push_type = h.get("apns-push-type")
        if push_type is None:
            return 400, "MissingPushType", [], b""
        if push_type != "liveactivity":
            return 400, "InvalidPushType", [], b""
        if h.get("apns-priority") not in (None, "5", "10"):
            return 400, "BadPriority", [], b""
        expiration = h.get("apns-expiration")
        if expiration is not None and not expiration.isdigit():
            return 400, "BadExpirationDate", [], b""
        # A channel that stores no message takes only broadcasts that expire at once.
        if self.channels[bundle][h["apns-channel-id"]] == 0 and expiration not in (None, "0"):
            return 400, "BadExpirationDate", [], b""
        if not body:
            return 400, "PayloadEmpty", [], b""
        if len(body) > 4096:
            return 413, "PayloadTooLarge", [], b""
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, "BadPayload", [], b""
        if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
            return 400, "BadPayload", [], b""
        self.sent.append((bundle, h["apns-channel-id"], body))
        return 200, None, [], b""
