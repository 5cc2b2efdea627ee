#!/usr/bin/env python3
"""A webhook receiver for the PostgreSQL fleet test: answers 204 to every POST, except that
the first request of the event named by --hang is held unanswered (as if the sender died
mid-POST). Prints its port, then logs one JSON line per request to --log: the event,
batch, body and whether it was answered (a held request is logged when it arrives)."""
import argparse
import http.server
import json
import threading

parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
parser.add_argument("--hang", default="")
args = parser.parse_args()
lock = threading.Lock()
held = threading.Event()
log = open(args.log, "a", buffering=1)


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        event = self.headers.get("X-Pushgate-Event", "")
        with lock:
            hang = event == args.hang and not held.is_set()
            if hang:
                held.set()
            log.write(json.dumps({"event": event, "batch": self.headers.get("X-Pushgate-Batch", ""),
                                  "body": body.decode(), "answered": not hang}) + "\n")
        if hang:
            threading.Event().wait(600)  # never answered while the test runs
            return
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
