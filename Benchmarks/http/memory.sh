#!/usr/bin/env bash
# Memory after big requests: the resident size of a release `pushgate serve` (dry run)
# at idle, right after each big request and 2 s later (after the heap trim that follows
# a big request once the worker pool is idle), for: a batch of 1,000 links (1 MiB), a
# 1,000,000-device preview (67 MB JSON body) and a 1,000,000-device campaign (NDJSON,
# 65 MB, with `confirm_devices`) until it has completed. `server.maxBodyBytes` is raised to 128 MiB for it.
# Usage: Benchmarks/http/memory.sh [DEVICES]
set -euo pipefail
cd "$(dirname "$0")/../.."
devices=${1:-1000000}
mkdir -p var
python3 - "$devices" var <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
tokens = ["%064x" % (0xabc << 200 | i) for i in range(n)]
head = '{"alert":{"title":"Price drop","body":"The jacket you saved is 20% off today"},"deeplink":"https://example.com/product/42"'
with open(out + "/bench-memory-preview.json", "w") as f:
    f.write(head + ',"devices":[' + ",".join('"%s"' % t for t in tokens) + "]}")
with open(out + "/bench-memory-campaign.ndjson", "w") as f:
    f.write(head + ',"dry_run":true,"confirm_devices":%d}\n' % n + "\n".join(tokens) + "\n")
links = ["https://example.com/product/%d?utm_source=push&ref=%s" % (i, "x" * 960) for i in range(1000)]
with open(out + "/bench-memory-links.json", "w") as f:
    json.dump({"links": links}, f)
PY
export PUSHGATE_SERVER_MAX_BODY_BYTES=$((128 << 20))
source Benchmarks/http/serve.sh
idle_kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
echo "server RSS at idle: $idle_kb kB"
report() { # what
  local now; now=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  echo "  $1: $now kB ($(( (now - idle_kb) / 1024 )) MB above idle)"
}
post() { # path content-type file
  curl -s -o var/bench-memory-answer.json -w '%{http_code}' -XPOST -H "Content-Type: $2" --data-binary @"$3" \
    "http://127.0.0.1:18080$1"
}
echo "== POST /v1/links/check, 1,000 links ($(wc -c < var/bench-memory-links.json) bytes): $(post /v1/links/check application/json var/bench-memory-links.json)"
report "right after"; sleep 2; report "2 s later"
echo "== POST /v1/notifications/preview, $devices devices ($(wc -c < var/bench-memory-preview.json) bytes): $(post /v1/notifications/preview application/json var/bench-memory-preview.json)"
report "right after"; sleep 2; report "2 s later"
echo "== POST /v1/campaigns, $devices devices, dry run ($(wc -c < var/bench-memory-campaign.ndjson) bytes): $(post /v1/campaigns application/x-ndjson var/bench-memory-campaign.ndjson)"
id=$(python3 -c 'import json; print(json.load(open("var/bench-memory-answer.json"))["id"])')
report "at the 202"
peak=0
for _ in $(seq 1200); do
  status=$(curl -s "http://127.0.0.1:18080/v1/campaigns/$id?per_page=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
  now=$(awk '/VmRSS/ {print $2}' /proc/$pid/status); [ "$now" -gt "$peak" ] && peak=$now
  [ "$status" = completed ] && break
  sleep 0.5
done
echo "  campaign $status; highest RSS seen while sending: $peak kB"
report "when completed"; sleep 2; report "2 s later"
echo "server peak RSS: $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB"
