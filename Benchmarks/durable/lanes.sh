#!/usr/bin/env bash
# Fair lanes benchmark: a release `pushgate serve` sends a bulk campaign of N devices
# (default 1,000,000) to the local h2o sink; while it runs, a 2-device campaign is POSTed
# SAMPLES times (default 5, one a second) and each is timed from the POST to `completed`
# (its status polled every 5 ms). Prints every sample, their median, and how far the bulk
# campaign was at each post (so a bulk campaign that finished first shows).
# Usage: Benchmarks/durable/lanes.sh [DEVICES] [SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/../.."
devices=${1:-1000000}
samples=${2:-5}
bin=.build/release/pushgate
bash scripts/release-build.sh --product pushgate >/dev/null
source Benchmarks/durable/setup.sh

now() { date +%s.%N; }
echo "== bulk campaign of $devices devices; sink h2o on port $port (1 thread, TLS), 2 connections x 100 streams"
"$bin" serve --config "$work/gateway.json" 2> "$work/serve.err" &
gpid=$!
pids+=($gpid)
for _ in $(seq 200); do grep -q "listening on" "$work/serve.err" 2>/dev/null && break; sleep 0.05; done
gport=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.err" | head -1)
api="http://127.0.0.1:$gport/v1/campaigns"
bulk=$(curl -sf --data-binary @"$work/campaign.ndjson" -H 'Content-Type: application/x-ndjson' "$api" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
delivered() { curl -sf "$api/$bulk?per_page=1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["counts"]["delivered"], d["lane"])'; }
# Under way first: some of the bulk campaign delivered.
until [ "$(delivered | cut -d' ' -f1)" -ge 20000 ]; do sleep 0.2; done

python3 - "$api" "$samples" "$bulk" <<'PY'
import json, statistics, sys, time, urllib.request
api, samples, bulk = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def get(url):
    with urllib.request.urlopen(url) as r:
        return json.load(r)
times = []
for n in range(samples):
    before = get(f"{api}/{bulk}?per_page=1")
    body = json.dumps({"alert": {"title": "Your code", "body": "123456"},
                       "devices": ["%064x" % (0xfeed << 200 | (n * 2 + i)) for i in range(2)]}).encode()
    start = time.monotonic()
    req = urllib.request.Request(api, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        small = json.load(r)["id"]
    while True:
        s = get(f"{api}/{small}?per_page=1")
        if s["status"] == "completed":
            break
        time.sleep(0.005)
    took = time.monotonic() - start
    times.append(took)
    print(f"sample {n + 1}: {took * 1000:.0f} ms from POST to completed ({s['lane']}, {s['counts']['delivered']} delivered); "
          f"bulk ({before['lane']}) had {before['counts']['delivered']} of {before['devices']} delivered, status {before['status']}")
    time.sleep(1)
print(f"median: {statistics.median(times) * 1000:.0f} ms over {samples} samples (max {max(times) * 1000:.0f} ms)")
PY
echo "bulk at the end: $(delivered) delivered (lane)"
kill -TERM $gpid; wait $gpid 2>/dev/null || true
