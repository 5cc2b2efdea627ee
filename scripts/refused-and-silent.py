#!/usr/bin/python3
"""`pushgate send` against the fake APNs with one device refused every time and one never
answered, many times over, counting innocent casualties and crashes (docs/apns.md, "When
there is no answer").

usage: scripts/refused-and-silent.py PUSHGATE_BINARY RUNS
  e.g. scripts/refused-and-silent.py .build/release/pushgate 20

Each run: 1,000 devices (plus the campaign's own 4), one connection, requestTimeoutSeconds
2; the fake answers every other device 200 at once. One line per run: the exit status,
how many innocent devices failed (and of those, how many never reached the fake and how
many it had answered 200), what the refused and the silent device ended as. A run is bad
when an innocent device failed or the exit status is not 0/1 (a crash: 134 is SIGABRT).
Environment: CONNECTIONS (default 1), TIMEOUT_SECONDS (default 2), KEEP=1 keeps each run's
folder (the fake's logs and send's --json output).
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests/APNsTests/Fixtures")
DEVICES = 1000


def token(i):
    return format(i, "064x")


def tls_material(folder):
    """A throwaway CA and a certificate for 127.0.0.1, as the tests make them."""
    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    with open(os.path.join(folder, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    p = lambda name: os.path.join(folder, name)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=test CA")
    openssl("req", *ec, "-keyout", p("server.key"), "-out", p("server.csr"), "-subj", "/CN=localhost")
    openssl("x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial",
            "-out", p("server.pem"), "-days", "2", "-extfile", p("ext.cnf"))
    return p("ca.pem"), p("server.pem"), p("server.key")


def run_once(binary, tls, refused, silent):
    ca, cert, key = tls
    folder = tempfile.mkdtemp(prefix="refused-and-silent-")
    with open(os.path.join(folder, "script.json"), "w") as f:
        json.dump({"tokens": {refused: [{"refuse": True}], silent: [{"noAnswer": True}]}}, f)
    with open(os.path.join(folder, "devices.txt"), "w") as f:
        f.write("\n".join(token(i) for i in range(DEVICES)) + "\n")
    fake = subprocess.Popen(["/usr/bin/python3", os.path.join(FIXTURES, "fake_apns.py"), "--log", os.path.join(folder, "log.jsonl"),
                             "--script", os.path.join(folder, "script.json"), "--key-file", os.path.join(FIXTURES, "test-key.p8"),
                             "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--tls-cert", cert, "--tls-key", key],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=FIXTURES)
    port = int(fake.stdout.readline())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHGATE_")}
    env.update({"PUSHGATE_APNS_DRY_RUN": "false", "PUSHGATE_APNS_URL": "https://127.0.0.1:%d" % port,
                "PUSHGATE_APNS_CA_FILE": ca, "PUSHGATE_APNS_KEY_FILE": os.path.join(FIXTURES, "test-key.p8"),
                "PUSHGATE_APNS_KEY_ID": "KEY1234567", "PUSHGATE_APNS_TEAM_ID": "TEAM123456",
                "PUSHGATE_APNS_CONNECTIONS": os.environ.get("CONNECTIONS", "1"),
                "PUSHGATE_APNS_REQUEST_TIMEOUT_SECONDS": os.environ.get("TIMEOUT_SECONDS", "2"),
                "PUSHGATE_STORAGE_PATH": os.path.join(folder, "send.db")})
    r = subprocess.run([binary, "send", "--campaign", os.path.join(ROOT, "config/campaigns/inline-alert.json"),
                        "--devices", os.path.join(folder, "devices.txt"), "--json"], env=env, cwd=ROOT, capture_output=True, text=True)
    fake.stdin.close()
    fake.wait()
    with open(os.path.join(folder, "stdout.jsonl"), "w") as f:
        f.write(r.stdout)
    with open(os.path.join(folder, "stderr.txt"), "w") as f:
        f.write(r.stderr)
    results = {}
    for line in r.stdout.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if "token" in o:
            results[o["token"]] = o

    def lines(name):
        path = os.path.join(folder, name)
        return [json.loads(l) for l in open(path)] if os.path.exists(path) else []
    received = {e.get("token") for e in lines("received.jsonl")}
    answered = {e.get("token") for e in lines("log.jsonl") if e.get("status") == 200}
    innocent = {t: o for t, o in results.items() if t not in (refused, silent) and o.get("result") != "delivered"}
    summary = {
        "exit": r.returncode, "results": len(results), "innocentFailed": len(innocent),
        "kinds": dict(collections.Counter("%s/%s" % (o.get("result"), o.get("reason")) for o in innocent.values())),
        "neverReached": sum(1 for t in innocent if t not in received), "answered200": sum(1 for t in innocent if t in answered),
        "refused": "%s: %s" % (results.get(refused, {}).get("reason"), results.get(refused, {}).get("message", "")),
        "silent": results.get(silent, {}).get("reason"), "folder": folder}
    bad = r.returncode not in (0, 1) or bool(innocent) or len(results) != DEVICES + 4
    if not bad and os.environ.get("KEEP") != "1":
        shutil.rmtree(folder, ignore_errors=True)
    return summary, bad, r.stderr


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, runs = sys.argv[1], int(sys.argv[2])
    refused, silent = token(7), token(500)
    tls_folder = tempfile.mkdtemp(prefix="refused-and-silent-tls-")
    tls = tls_material(tls_folder)
    bad_runs = 0
    for run in range(runs):
        summary, bad, stderr = run_once(binary, tls, refused, silent)
        print("run %d: %s" % (run, json.dumps(summary)), flush=True)
        if bad:
            bad_runs += 1
            print(stderr[-2000:], flush=True)
    shutil.rmtree(tls_folder, ignore_errors=True)
    print("bad runs: %d of %d" % (bad_runs, runs))
    return 1 if bad_runs else 0


if __name__ == "__main__":
    sys.exit(main())
