#!/usr/bin/python3
"""A fake APNs for pushgate's tests: HTTP/2 over cleartext (prior knowledge) or TLS.

It checks every request the way Apple documents (method, path, token, headers, body,
ES256 provider token verified with the public key) and answers as the test script says:
a status and reason per device token or per N-th request, delays, no answer at all
(a hung stream), an answer whose headers go out and whose end never does (stallBody),
a refused stream (RST_STREAM REFUSED_STREAM), a reset with any HTTP/2 error code, a GOAWAY after N requests on a connection, or a connection that goes quiet
after N answers (silentAfter). Every answered request is
logged as one JSON line (--log), and every complete request, answered or not, as one line
in the file next to it named received.jsonl, so that tests can count what was sent.

Commands on stdin, one per line: "close" stops listening and cuts every connection (an
unreachable APNs), "open" listens again on the same port, "key REASON" answers 403 REASON
to every request whose provider token verified (Apple refusing the key: InvalidProviderToken
for a revoked key, BadEnvironmentKeyInToken, ...), "key ok" accepts the key again. End of
stdin stops the fake. "hold" keeps every answer (streams stay open) until "release".

Like APNs, a connection belongs to the key of the first token accepted on it: a token of
another key id on it is answered 403 UnrelatedKeyIdInToken.

Script "environment": "sandbox" — answer like the development server, which adds an
apns-unique-id header (the Push Notifications Console's id for the notification) to its
answers; production answers carry only apns-id.

Script "appleClockAheadSeconds": N — the fake's clock runs N seconds ahead of this host's
when it checks a token's age, so a token younger than an hour here can be ExpiredProviderToken
there (clock skew).

Usage: fake_apns.py --log FILE [--script FILE] [--key-file P8 | --public-key PEM]
                    [--team-id ID] [--key-id ID] [--tls-cert PEM --tls-key PEM]
                    [--token-update-window SECONDS]

--token-update-window turns on Apple's rule that a key's provider token may be replaced
no more often than every 20 minutes (1200 s): once a key's token has been accepted, a
different valid token for the same key is answered 429 TooManyProviderTokenUpdates until
the window since the current token was first seen has passed; then it becomes current.
Prints the port it listens on (127.0.0.1, ephemeral) as the first line of stdout.
"""
import argparse
import asyncio
import hashlib
import json
import os
import re
import socket
import ssl
import sys
import time
import uuid

import h2.config
import h2.errors
import h2.connection
import h2.events
import h2.settings
import jwt
from cryptography.hazmat.primitives import serialization

import fake_broadcast  # the channel management API and the broadcast send path

PUSH_TYPES = {"alert", "background", "location", "voip", "complication", "fileprovider", "mdm",
              "liveactivity", "pushtotalk", "widgets", "controls"}
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
TOKEN_RE = re.compile(r"^[0-9a-f]{64,200}$")
# Apple's per-push-type topic suffixes (the bundle id comes before them).
TOPIC_SUFFIXES = [".voip-ptt", ".voip", ".complication", ".pushkit.fileprovider", ".location-query",
                  ".push-type.liveactivity", ".push-type.widgets", ".push-type.controls"]


class Fake:
    def __init__(self, args):
        self.script = {}
        if args.script:
            with open(args.script) as f:
                self.script = json.load(f)
        self.default = self.script.get("default", {"status": 200})
        self.per_token = {k: list(v) for k, v in self.script.get("tokens", {}).items()}
        self.per_request = self.script.get("requests", {})
        self.goaway_after = self.script.get("goawayAfter")
        self.goaway_connections = self.script.get("goawayConnections", 1)
        self.max_streams = self.script.get("maxConcurrentStreams", 100)
        # "apnsStreams": true — like APNs after a rejection: the stream limit drops to one,
        # and goes back up after the next success. (APNs also starts a connection at one
        # stream; a client may open more before it has read the server's SETTINGS, which
        # this fake's HTTP/2 library would treat as a connection error, so it starts high.)
        self.apns_streams = self.script.get("apnsStreams", False)
        self.framing = self.script.get("framing", "headers")
        # "dropAfter": N — the first "dropConnections" connections answer nothing and are
        # cut (TCP reset, no GOAWAY) once N requests have arrived on them.
        self.drop_after = self.script.get("dropAfter")
        self.drop_connections = self.script.get("dropConnections", 1)
        self.dropped = 0
        # "silentAfter": N — the first "silentConnections" connections go quiet once N
        # requests have been answered on them, as a connection a middlebox dropped does:
        # the socket stays open, and nothing is written on it again (no answer, no PING or
        # SETTINGS acknowledgement); requests arriving on it are logged as "silent".
        self.silent_after = self.script.get("silentAfter")
        self.silent_connections = self.script.get("silentConnections", 1)
        self.silenced = 0
        self.team_id = args.team_id
        self.key_id = args.key_id
        self.public_key = None
        if args.key_file:
            with open(args.key_file, "rb") as f:
                self.public_key = serialization.load_pem_private_key(f.read(), None).public_key()
        elif args.public_key:
            with open(args.public_key, "rb") as f:
                self.public_key = serialization.load_pem_public_key(f.read())
        # "--keys FILE": several signing keys, each with its team and the topics it may
        # push to, like APNs (a token is verified with the key its kid names; a topic the
        # key's team does not own is TopicDisallowed).
        self.keys = {}
        if args.keys:
            with open(args.keys) as f:
                for entry in json.load(f):
                    with open(entry["keyFile"], "rb") as kf:
                        public = serialization.load_pem_private_key(kf.read(), None).public_key()
                    self.keys[entry["keyId"]] = {"team": entry["teamId"], "public_key": public, "topics": set(entry["topics"])}
        self.verified = {}
        self.broadcast = fake_broadcast.Broadcast(self.script)
        self.key_problem = self.script.get("keyProblem")
        # "keyProblems": {"KEYID": "InvalidProviderToken", ...}: one key refused, the others not.
        self.key_problems = dict(self.script.get("keyProblems", {}))
        self.clock_ahead = self.script.get("appleClockAheadSeconds", 0)
        self.sandbox = self.script.get("environment") == "sandbox"
        self.token_window = args.token_update_window
        self.current_tokens = {}  # (iss, kid) -> (token, first seen)
        self.log = open(args.log, "a", buffering=1)
        self.received_log = open(os.path.join(os.path.dirname(os.path.abspath(args.log)), "received.jsonl"), "a", buffering=1)
        self.live = set()
        self.received = 0
        self.answered = 0
        self.connections = 0
        self.goaways_sent = 0
        self.refused = 0
        # "hold" keeps every answer until "release" (a test decides when streams free up).
        self.holding = False
        self.held = []

    def check_token(self, authorization):
        """Returns (reason or None, iat, kid)."""
        if authorization is None:
            return "MissingProviderToken", None, None
        if not authorization.startswith("bearer "):
            return "InvalidProviderToken", None, None
        token = authorization[len("bearer "):]
        if token in self.verified:
            return self.verified[token]
        result = self._verify(token)
        self.verified[token] = result
        return result

    def check_update_rule(self, authorization, kid):
        """Apple's 20-minute rule, applied to a token that verified."""
        if self.token_window is None:
            return None
        token = authorization[len("bearer "):]
        claims = jwt.decode(token, options={"verify_signature": False})
        key = (claims.get("iss"), kid)
        now = time.time()
        current = self.current_tokens.get(key)
        if current is None or current[0] == token:
            if current is None:
                self.current_tokens[key] = (token, now)
            return None
        if now - current[1] < self.token_window:
            return "TooManyProviderTokenUpdates"
        self.current_tokens[key] = (token, now)
        return None

    def _verify(self, token):
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return "InvalidProviderToken", None, None
        kid = header.get("kid")
        if header.get("alg") != "ES256" or set(header.keys()) != {"alg", "kid"}:
            return "InvalidProviderToken", None, kid
        entry = self.keys.get(kid)
        if self.keys and entry is None:
            return "InvalidProviderToken", None, kid
        if not self.keys and self.key_id and kid != self.key_id:
            return "InvalidProviderToken", None, kid
        public_key = entry["public_key"] if entry else self.public_key
        team_id = entry["team"] if entry else self.team_id
        if public_key is None:
            return "InvalidProviderToken", None, kid
        try:
            claims = jwt.decode(token, public_key, algorithms=["ES256"],
                                options={"verify_iat": False, "verify_exp": False})
        except jwt.PyJWTError:
            return "InvalidProviderToken", None, kid
        iat = claims.get("iat")
        if set(claims.keys()) != {"iss", "iat"} or type(iat) is not int:
            return "InvalidProviderToken", None, kid
        if team_id and claims.get("iss") != team_id:
            return "InvalidProviderToken", iat, kid
        if iat < time.time() + self.clock_ahead - 3600:
            return "ExpiredProviderToken", iat, kid
        return None, iat, kid

    def check_topic(self, kid, topic):
        """With --keys: the topic, without Apple's push-type suffix, must be one of the key's."""
        entry = self.keys.get(kid)
        if entry is None or topic is None:
            return None
        base = topic
        for suffix in TOPIC_SUFFIXES:
            if base.endswith(suffix):
                base = base[:-len(suffix)]
                break
        return None if base in entry["topics"] else (400, "TopicDisallowed")

    def validate(self, headers, body):
        """Apple's checks, in the order APNs documents its 4xx reasons."""
        names = [n for n, _ in headers]
        if len(names) != len(set(names)):
            return 400, "DuplicateHeaders"
        h = dict(headers)
        path = h.get(":path", "")
        if fake_broadcast.handles(path):
            return None  # checked by fake_broadcast once the provider token verified
        if h.get(":method") != "POST":
            return 405, "MethodNotAllowed"
        if not path.startswith("/3/device/"):
            return 404, "BadPath"
        token = path[len("/3/device/"):]
        if not token:
            return 400, "MissingDeviceToken"
        if not TOKEN_RE.match(token):
            return 400, "BadDeviceToken"
        push_type = h.get("apns-push-type")
        if push_type is not None and push_type not in PUSH_TYPES:
            return 400, "InvalidPushType"
        if "apns-topic" not in h:
            return 400, "MissingTopic"
        priority = h.get("apns-priority")
        if priority is not None and priority not in ("1", "5", "10"):
            return 400, "BadPriority"
        if push_type == "background" and priority not in (None, "5"):
            return 400, "BadPriority"
        expiration = h.get("apns-expiration")
        if expiration is not None and not expiration.isdigit():
            return 400, "BadExpirationDate"
        collapse = h.get("apns-collapse-id")
        if collapse is not None and len(collapse.encode()) > 64:
            return 400, "BadCollapseId"
        apns_id = h.get("apns-id")
        if apns_id is not None and not UUID_RE.match(apns_id):
            return 400, "BadMessageId"
        if not body:
            return 400, "PayloadEmpty"
        limit = 5120 if push_type == "voip" else 4096
        if len(body) > limit:
            return 413, "PayloadTooLarge"
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, "BadPayload"
        if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
            return 400, "BadPayload"
        return None

    def answer_for(self, n, token):
        if str(n) in self.per_request:
            return self.per_request[str(n)]
        queue = self.per_token.get(token)
        if queue:
            return queue.pop(0) if len(queue) > 1 else queue[0]
        return self.default


class Connection(asyncio.Protocol):
    def __init__(self, fake):
        self.fake = fake
        fake.connections += 1
        self.id = fake.connections
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.streams = {}
        self.answered_here = 0
        self.received_here = 0
        self.doomed = fake.drop_after is not None and fake.dropped < fake.drop_connections
        if self.doomed:
            fake.dropped += 1
        self.closed = False
        self.silent = False  # "silentAfter": nothing is written once this is set
        self.last_stream_id = None  # set once this connection sent GOAWAY
        # Apple's rule: a token whose key id differs from the first accepted token's on this
        # connection is UnrelatedKeyIdInToken ("open a new connection").
        self.first_kid = None

    def connection_made(self, transport):
        self.transport = transport
        self.fake.live.add(self)
        self.stream_limit = self.fake.max_streams
        # h2 itself would treat a stream over the limit as a connection error; a client may
        # legitimately open streams before it has read our SETTINGS, and RFC 9113 §5.1.2
        # lets a server refuse just those streams. So h2 is told a large limit and the
        # advertised one is sent in a SETTINGS frame of our own and enforced below with
        # REFUSED_STREAM, as a server like APNs does.
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000})
        self.h2.initiate_connection()
        self.flush()
        self.advertise(self.stream_limit)
        self.flush()

    def advertise(self, limit):
        """A raw SETTINGS frame: SETTINGS_MAX_CONCURRENT_STREAMS = limit."""
        self.stream_limit = limit
        if not self.closed:
            self.transport.write(bytes([0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3]) + limit.to_bytes(4, "big"))

    def connection_lost(self, exc):
        self.closed = True
        self.fake.live.discard(self)

    def flush(self):
        data = self.h2.data_to_send()
        if data and not self.closed and not self.silent:
            self.transport.write(data)

    def data_received(self, data):
        if self.closed:
            return
        try:
            events = self.h2.receive_data(data)
        except Exception as error:
            print("connection %d: %r" % (self.id, error), file=sys.stderr, flush=True)
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                if len(self.streams) >= self.stream_limit:
                    self.h2.reset_stream(event.stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                    self.fake.refused += 1
                    continue
                self.streams[event.stream_id] = (event.headers, bytearray())
            elif isinstance(event, h2.events.DataReceived):
                if event.stream_id in self.streams:
                    self.streams[event.stream_id][1].extend(event.data)
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                if event.stream_id in self.streams:
                    self.request_complete(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                entry = self.streams.pop(event.stream_id, None)
                if entry is not None and event.remote_reset:
                    path = dict(entry[0]).get(":path", "")
                    self.fake.received_log.write(json.dumps({
                        "connection": self.id, "stream": event.stream_id, "action": "clientReset",
                        "code": int(event.error_code), "token": path[len("/3/device/"):], "time": time.time()}) + "\n")
        self.flush()

    def request_complete(self, stream_id):
        fake = self.fake
        headers, body = self.streams[stream_id]
        self.received_here += 1
        if self.doomed:
            if self.received_here >= fake.drop_after:
                self.closed = True
                self.transport.abort()
            return
        fake.received += 1
        n = fake.received
        h = dict(headers)
        path = h.get(":path", "")
        # A broadcast's audience is its channel: the script's "tokens" answer channel ids too.
        token = path[len("/3/device/"):] if path.startswith("/3/device/") else \
            (h.get("apns-channel-id") or "") if path.startswith("/4/broadcasts/") else ""
        answer = fake.answer_for(n, token)
        action = "refuse" if answer.get("refuse") else "reset" if "reset" in answer else \
            "hang" if answer.get("noAnswer") else "answer"
        if self.silent:
            action = "silent"
        fake.received_log.write(json.dumps({"n": n, "connection": self.id, "stream": stream_id, "token": token,
                                            "action": action, "time": time.time()}) + "\n")
        if action in ("refuse", "reset"):
            # RST_STREAM after the whole request arrived: REFUSED_STREAM promises it was not
            # processed (RFC 9113 §8.7); any other code leaves that unknown.
            code = h2.errors.ErrorCodes.REFUSED_STREAM if action == "refuse" else answer["reset"]
            del self.streams[stream_id]
            try:
                self.h2.reset_stream(stream_id, code)
            except Exception:
                pass
            if action == "refuse":
                fake.refused += 1
            return
        if action in ("hang", "silent"):
            return
        if fake.holding:
            fake.held.append((self, stream_id, n, token, headers, bytes(body), answer))
            return
        delay = answer.get("delayMs", fake.script.get("delayMs", 0)) / 1000.0
        if delay > 0:
            asyncio.get_event_loop().call_later(delay, self.respond, stream_id, n, token, headers, bytes(body), answer)
        else:
            self.respond(stream_id, n, token, headers, bytes(body), answer)

    def respond(self, stream_id, n, token, headers, body, answer):
        fake = self.fake
        if self.closed or self.silent or stream_id not in self.streams:
            return
        if self.last_stream_id is not None and stream_id > self.last_stream_id:
            return  # after GOAWAY: the client must send it again elsewhere
        open_streams = len(self.streams)
        del self.streams[stream_id]
        h = dict(headers)
        token_reason, iat, kid = fake.check_token(h.get("authorization"))
        if token_reason is None:
            token_reason = fake.check_update_rule(h.get("authorization"), kid)
        if token_reason is None and fake.key_problem:
            token_reason = fake.key_problem
        if token_reason is None:
            if self.first_kid is None:
                self.first_kid = kid
            elif kid != self.first_kid:
                token_reason = "UnrelatedKeyIdInToken"
        if token_reason is None and kid in fake.key_problems:
            token_reason = fake.key_problems[kid]
        violation = fake.validate(headers, body)
        path = h.get(":path", "")
        broadcast_side = fake_broadcast.handles(path)
        if violation is None and token_reason is None:
            violation = fake.check_topic(kid, fake_broadcast.bundle_of(path) if broadcast_side else h.get("apns-topic"))
        extra, success_body = [], b""
        if token_reason == "TooManyProviderTokenUpdates":
            status, reason = 429, token_reason
        elif token_reason is not None:
            status, reason = 403, token_reason
        elif violation is not None:
            status, reason = violation
        elif broadcast_side and answer.get("status", 200) == 200:
            status, reason, extra, success_body = fake.broadcast.answer(h, body)
        else:
            status, reason = answer.get("status", 200), answer.get("reason")
        apns_id = h.get("apns-id") or str(uuid.uuid4()).upper()
        response = [(":status", str(status)), ("apns-id", apns_id)] + extra
        if broadcast_side:
            response.append(("apns-request-id", h.get("apns-request-id") or str(uuid.uuid4())))
        unique_id = str(uuid.uuid4()) if fake.sandbox and not broadcast_side else None
        if unique_id:
            response.append(("apns-unique-id", unique_id))
        if "retryAfter" in answer and status != 200:
            response.append(("retry-after", str(answer["retryAfter"])))
        payload = b""
        if status >= 300:
            error = {"reason": reason or "InternalServerError"}
            if status == 410:
                error["timestamp"] = answer.get("timestamp", 1700000000000)
            payload = json.dumps(error).encode()
            response.append(("content-type", "application/json"))
        try:
            payload = payload or success_body
            if answer.get("stallBody"):
                self.h2.send_headers(stream_id, response)  # and never the end of the stream
            elif payload:
                self.h2.send_headers(stream_id, response)
                self.h2.send_data(stream_id, payload, end_stream=True)
            elif fake.framing == "data" or (fake.framing == "alternate" and n % 2 == 0):
                self.h2.send_headers(stream_id, response)
                self.h2.send_data(stream_id, b"", end_stream=True)
            else:
                self.h2.send_headers(stream_id, response, end_stream=True)
        except Exception:
            return
        fake.answered += 1
        self.answered_here += 1
        if (fake.silent_after is not None and self.answered_here >= fake.silent_after
                and fake.silenced < fake.silent_connections):
            fake.silenced += 1
            self.flush()  # this answer still goes out; nothing after it
            self.silent = True
        if fake.apns_streams:
            wanted = fake.max_streams if status == 200 else 1
            if wanted != self.stream_limit:
                self.advertise(wanted)
        fake.log.write(json.dumps({
            "n": n, "connection": self.id, "stream": stream_id, "token": token, "status": status,
            "reason": reason if status >= 300 else None,
            "method": h.get(":method"), "path": path, "channel": dict(extra).get("apns-channel-id") or h.get("apns-channel-id"), "time": time.time(), "iat": iat, "kid": kid,
            "topic": h.get("apns-topic"), "pushType": h.get("apns-push-type"), "priority": h.get("apns-priority"),
            "bodyBytes": len(body), "openStreams": open_streams, "violation": violation[1] if violation else None,
            "tokenProblem": token_reason, "uniqueId": unique_id,
            # Which provider token signed it (a digest: the log never holds a credential).
            "tokenSha": hashlib.sha256((h.get("authorization") or "").encode()).hexdigest()[:16],
            "headers": sorted(name for name, _ in headers if not name.startswith(":")),
            # The header lines in the order they arrived, the provider token's value left out.
            "lines": [name if name == "authorization" else name + ": " + value
                      for name, value in headers if not name.startswith(":")],
        }) + "\n")
        self.flush()
        if (fake.goaway_after is not None and self.answered_here >= fake.goaway_after
                and fake.goaways_sent < fake.goaway_connections):
            fake.goaways_sent += 1
            self.last_stream_id = max(self.streams.keys() | {stream_id}) if fake.script.get("goawayGraceful") else stream_id
            self.h2.close_connection(last_stream_id=self.last_stream_id)
            self.flush()
            # Like APNs and most servers, close the socket a little later rather than in
            # the same instant, so answers already written are read before the EOF.
            asyncio.get_event_loop().call_later(0.2, self.close)

    def close(self):
        if not self.closed:
            self.closed = True
            self.transport.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--script")
    parser.add_argument("--key-file")
    parser.add_argument("--public-key")
    parser.add_argument("--team-id")
    parser.add_argument("--key-id")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--token-update-window", type=float)
    parser.add_argument("--keys")
    args = parser.parse_args()
    fake = Fake(args)
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(args.tls_cert, args.tls_key)
        context.set_alpn_protocols(["h2"])
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(lambda: Connection(fake), "127.0.0.1", 0, ssl=context))
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    state = {"server": server, "pending": b""}

    def command(line):
        if line == b"close" and state["server"] is not None:
            state["server"].close()
            state["server"] = None
            # Keep the port bound but not listening: connections are refused, and no other
            # process (another test's fake) can take the port meanwhile.
            holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            holder.bind(("127.0.0.1", port))
            state["holder"] = holder
            for connection in list(fake.live):
                connection.closed = True
                connection.transport.abort()
        elif line.startswith(b"keyid "):
            # "keyid KID REASON" refuses one key; "keyid KID ok" accepts it again.
            kid, problem = line[6:].decode().split(" ", 1)
            if problem == "ok":
                fake.key_problems.pop(kid, None)
            else:
                fake.key_problems[kid] = problem
        elif line.startswith(b"key "):
            problem = line[4:].decode()
            fake.key_problem = None if problem == "ok" else problem
        elif line == b"hold":
            fake.holding = True
        elif line == b"release":
            fake.holding = False
            held, fake.held = fake.held, []
            for connection, *answer in held:
                connection.respond(*answer)  # flushes its own answer
        elif line == b"open" and state["server"] is None:
            loop.create_task(reopen())
            return
        print("ok " + line.decode(), flush=True)

    async def reopen():
        state.pop("holder").close()
        state["server"] = await loop.create_server(lambda: Connection(fake), "127.0.0.1", port, ssl=context,
                                                   reuse_address=True)
        print("ok open", flush=True)

    def read_stdin():
        chunk = os.read(sys.stdin.fileno(), 4096)
        if not chunk:
            loop.stop()  # the test closed our stdin
            return
        state["pending"] += chunk
        while b"\n" in state["pending"]:
            line, state["pending"] = state["pending"].split(b"\n", 1)
            command(line.strip())

    try:
        loop.add_reader(sys.stdin.fileno(), read_stdin)
    except (PermissionError, ValueError, OSError):
        pass  # stdin is not pollable (a file): run until killed
    loop.run_forever()


if __name__ == "__main__":
    main()
