#!/usr/bin/python3
"""Writes Tests/StorageTests/Fixtures/migration: a database as the pushgate of the day
writes it, for the migration tests of the next schema.

For each backend (SQLite file, PostgreSQL dump) it runs `pushgate serve` against the fake
APNs (Tests/APNsTests/Fixtures/fake_apns.py) and sends, through the API:
  - `early`: one device, answered 410: its token is dead from then on;
  - `finished`: 300 devices with varied results: delivered, 410 Unregistered (with
    Apple's timestamp), 400 BadDeviceToken, 429 then delivered, 503 until its attempts
    are spent, the dead token skipped at intake; completed;
  - `unfinished`: 2000 devices at 40 per second, one answered 503 with Retry-After of a
    day (retrying); paused once a part was delivered, its pages read, the server stopped,
    then resumed offline (`pushgate campaigns resume`): a running campaign with devices
    delivered, pending and one retrying.
What the API answered for every campaign (all result pages, reasons) is written next to
the database as expected-<backend>.json; the test compares today's reading with it.

Usage: scripts/make-migration-fixtures.py [path/to/pushgate]   (default .build/debug/pushgate)
Needs python3-h2, openssl and the PostgreSQL server binaries (make deps).
"""
import glob
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests/StorageTests/Fixtures/migration")
FAKE = os.path.join(ROOT, "Tests/APNsTests/Fixtures/fake_apns.py")
KEY = os.path.join(ROOT, "Tests/APNsTests/Fixtures/test-key.p8")
TEAM, KEY_ID = "TEAM123456", "KEY1234567"
SQLITE_SCHEMA, POSTGRES_SCHEMA = 11, 6


def token(campaign, n):
    h = format(campaign * 1_000_000 + n, "x")
    return "f" * (64 - len(h)) + h


DEAD = token(9, 0)
FINISHED = [token(1, i) for i in range(300)]
FINISHED[3] = DEAD
UNFINISHED = [token(2, i) for i in range(2000)]
SCRIPT = {
    "delayMs": 1,
    "environment": "sandbox",  # answers carry apns-unique-id, as the development environment does
    "tokens": {
        DEAD: [{"status": 410, "reason": "Unregistered", "timestamp": 1765000000000}],
        FINISHED[10]: [{"status": 400, "reason": "BadDeviceToken"}],
        FINISHED[20]: [{"status": 410, "reason": "Unregistered", "timestamp": 1765100000000}],
        FINISHED[30]: [{"status": 429, "reason": "TooManyRequests"}, {"status": 200}],
        FINISHED[40]: [{"status": 503, "reason": "ServiceUnavailable"}],
        FINISHED[299]: [{"status": 400, "reason": "DeviceTokenNotForTopic"}],
        UNFINISHED[5]: [{"status": 503, "reason": "ServiceUnavailable"}],
    },
}


def run(args, **kw):
    return subprocess.run(args, check=True, **kw)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tls(folder):
    p = lambda n: os.path.join(folder, n)
    with open(p("ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    q = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run(["openssl", "req", "-x509"] + ec + ["-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=fixture CA"], **q)
    run(["openssl", "req"] + ec + ["-keyout", p("server.key"), "-out", p("server.csr"), "-subj", "/CN=localhost"], **q)
    run(["openssl", "x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial",
         "-out", p("server.pem"), "-days", "2", "-extfile", p("ext.cnf")], **q)
    return p("ca.pem"), p("server.pem"), p("server.key")


class Postgres:
    """A throwaway cluster (as Tests/TestSupport/PostgresCluster.swift makes it)."""

    def __init__(self, folder):
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda b: int(b.split("/")[4]))
        if not versions:
            sys.exit("PostgreSQL server binaries not found under /usr/lib/postgresql (make deps)")
        self.bin = os.path.dirname(versions[-1])
        self.folder = folder
        self.port = free_port()
        self.as_pg = []
        if os.getuid() == 0:
            import pwd
            user = pwd.getpwnam("postgres")
            os.chown(folder, user.pw_uid, user.pw_gid)
            self.as_pg = ["runuser", "-u", "postgres", "--"]
        q = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run(self.as_pg + [self.bin + "/initdb", "-D", folder + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"], **q)
        run(self.as_pg + [self.bin + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "start", "-w", "-o",
                          f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={folder} -c fsync=off"], **q)
        run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-c", "CREATE DATABASE fixture"])
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/fixture"

    def dump(self, path):
        with open(path, "w") as f:
            run([self.bin + "/pg_dump", "--no-owner", "--no-privileges", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "fixture"], stdout=f)

    def schema(self):
        out = run(["psql", "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "fixture", "-c",
                   "SELECT version FROM pushgate_schema"], capture_output=True, text=True).stdout
        return int(out.strip())

    def stop(self):
        subprocess.run(self.as_pg + [self.bin + "/pg_ctl", "-D", self.folder + "/data", "stop", "-m", "fast", "-w"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Serve:
    def __init__(self, binary, config):
        self.process = subprocess.Popen([binary, "serve", "--config", config], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seen = b""
        while b"listening on http://127.0.0.1:" not in seen or not seen.split(b"listening on http://127.0.0.1:")[1][:6].rstrip(b"0123456789"):
            chunk = os.read(self.process.stderr.fileno(), 4096)
            if not chunk:
                sys.exit("pushgate serve did not start: " + seen.decode(errors="replace"))
            seen += chunk
        digits = seen.split(b"listening on http://127.0.0.1:")[1]
        self.port = int(digits[: len(digits) - len(digits.lstrip(b"0123456789"))])

    def call(self, method, path, body=None, content_type="application/json"):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=body, method=method,
                                         headers={"Content-Type": content_type} if body is not None else {})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())

    def post(self, tokens, extra=""):
        head = '{"alert":{"title":"Sale","body":"Today only"},"deeplink":"https://example.com/product/42",' \
               f'"confirm_devices":{len(tokens)}{extra}}}\n'
        return self.call("POST", "/v1/campaigns", (head + "".join(t + "\n" for t in tokens)).encode(), "application/x-ndjson")["id"]

    def wait(self, condition, what, seconds=120, shown=lambda: ""):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if condition():
                return
            time.sleep(0.05)
        sys.exit(f"timed out waiting for {what} {shown()}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        if self.process.wait(timeout=60) != 0:
            sys.exit("pushgate serve did not stop cleanly")


def read_back(serve, ids):
    """Every campaign as the API shows it: all result pages (1000 a page) and its reasons."""
    shown = []
    for name, cid in ids:
        pages, page = [], 1
        while True:
            detail = serve.call("GET", f"/v1/campaigns/{cid}?per_page=1000&page={page}")
            pages += detail["results"]
            if len(detail["results"]) < 1000:
                break
            page += 1
        detail["results"] = pages
        del detail["page"]
        reasons = serve.call("GET", f"/v1/campaigns/{cid}/reasons?state=delivered,failed,unregistered,retrying,skipped")
        shown.append({"name": name, "campaign": detail, "reasons": reasons["reasons"]})
    return shown


def make(backend, binary, work):
    """One backend's database, sent to a fake APNs of its own (its scripted answers are used up)."""
    log(f"{backend}: writing")
    ca, cert, key = tls(work)
    script = os.path.join(work, f"script-{backend}.json")
    with open(script, "w") as f:
        json.dump(SCRIPT, f)
    fake = subprocess.Popen(["/usr/bin/python3", FAKE, "--log", os.path.join(work, f"log-{backend}.jsonl"), "--script", script,
                             "--team-id", TEAM, "--key-id", KEY_ID, "--key-file", KEY, "--tls-cert", cert, "--tls-key", key],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(work, f"fake-{backend}.err"), "w"))
    line = fake.stdout.readline()
    if not line.strip().isdigit():
        sys.exit("fake_apns.py did not start: " + open(os.path.join(work, f"fake-{backend}.err")).read())
    fake_port = int(line)
    if backend == "sqlite":
        database = os.path.join(work, "pushgate.db")
        storage = {"path": database}
    else:
        pg = Postgres(tempfile.mkdtemp(prefix="pushgate-fixture-pg-"))
        storage = {"url": pg.url, "poolSize": 3}

    def config(name, retry_seconds):
        path = os.path.join(work, f"{backend}-{name}.json")
        with open(path, "w") as f:
            json.dump({"topic": "com.example.shop", "routes": os.path.join(ROOT, "config/routes.json"),
                       "templates": os.path.join(ROOT, "Templates"),
                       "apns": {"url": f"https://127.0.0.1:{fake_port}", "caFile": ca, "teamId": TEAM, "keyId": KEY_ID, "keyFile": KEY,
                                "connections": 1},
                       "server": {"listen": "127.0.0.1:0", "requestLog": "off"}, "storage": storage,
                       "dispatcher": {"inFlight": 10, "claimBatch": 10, "maxAttempts": 3, "retryBaseSeconds": retry_seconds[0],
                                      "retryMaxSeconds": retry_seconds[1]}}, f)
        return path
    quick, slow = config("quick", (0.05, 0.2)), config("slow", (3600, 3600))
    try:
        serve = Serve(binary, quick)
        status = lambda cid: serve.call("GET", f"/v1/campaigns/{cid}?per_page=1")
        early = serve.post([DEAD])
        serve.wait(lambda: status(early)["status"] == "completed", "the early campaign")
        finished = serve.post(FINISHED)
        serve.wait(lambda: status(finished)["status"] == "completed", "the finished campaign")
        # Retries an hour apart from here on: the unfinished campaign keeps its device retrying.
        serve.stop()
        serve = Serve(binary, slow)
        unfinished = serve.post(UNFINISHED, ',"rate_per_second":40')
        serve.wait(lambda: status(unfinished)["counts"]["retrying"] == 1 and status(unfinished)["counts"]["delivered"] >= 100, "a part sent",
                   shown=lambda: status(unfinished)["counts"])
        serve.call("POST", f"/v1/campaigns/{unfinished}/pause")
        serve.wait(lambda: status(unfinished)["counts"]["in-flight"] == 0, "the in-flight devices recorded")
        time.sleep(1)
        shown = read_back(serve, [("early", early), ("finished", finished), ("unfinished", unfinished)])
        serve.stop()
        run([binary, "campaigns", "resume", unfinished, "--config", slow], cwd=ROOT, stdout=subprocess.DEVNULL)
        counts = shown[2]["campaign"]["counts"]
        assert counts["pending"] > 0 and counts["retrying"] == 1 and counts["delivered"] >= 100, counts
        assert shown[1]["campaign"]["counts"]["skipped"] == 1, shown[1]["campaign"]["counts"]
        if backend == "sqlite":
            # One self-contained file (no -wal), its schema checked.
            target = os.path.join(OUT, f"sqlite-schema{SQLITE_SCHEMA}.db")
            if os.path.exists(target):
                os.remove(target)
            source = sqlite3.connect(database)
            copy = sqlite3.connect(target)
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            version = copy.execute("PRAGMA user_version").fetchone()[0]
            copy.close()
            source.close()
            assert version == SQLITE_SCHEMA, f"schema {version}, expected {SQLITE_SCHEMA}"
        else:
            version = pg.schema()
            assert version == POSTGRES_SCHEMA, f"schema {version}, expected {POSTGRES_SCHEMA}"
            pg.dump(os.path.join(OUT, f"postgres-schema{POSTGRES_SCHEMA}.sql"))
        write_expected(os.path.join(OUT, f"expected-{backend}.json"), version, shown)
        log(f"{backend}: schema {version}; unfinished counts {counts}")
    finally:
        fake.stdin.close()
        fake.terminate()
        fake.wait()
        if backend == "postgres":
            pg.stop()
            shutil.rmtree(pg.folder, ignore_errors=True)


def write_expected(path, version, shown):
    """JSON with one device result a line, so a change shows as a short diff."""
    compact = lambda value: json.dumps(value, sort_keys=True, separators=(",", ":"))
    parts = []
    for item in shown:
        campaign = dict(item["campaign"])
        results = campaign.pop("results")
        head = f'{{"name":{compact(item["name"])},"reasons":{compact(item["reasons"])},"campaign":{compact(campaign)[:-1]}'
        parts.append(head + ',"results":[\n' + ",\n".join(compact(r) for r in results) + "]}}")
    with open(path, "w") as f:
        f.write(f'{{"schema":{version},"campaigns":[\n' + ",\n".join(parts) + "\n]}\n")
    json.load(open(path))  # still JSON


def log(text):
    print("make-migration-fixtures: " + text, file=sys.stderr)


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug/pushgate"))
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="pushgate-fixtures-")
    try:
        for backend in sys.argv[2:] or ["sqlite", "postgres"]:
            make(backend, binary, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
