#!/usr/bin/env bash
# A campaign bigger than any request, sent in parts: N devices (default 10,000,000) to a
# release `pushgate serve` on SQLite (or PostgreSQL: `pg`), created with
# POST /v1/campaigns?parts=true, filled with PUT /v1/campaigns/{id}/parts/{n} of PART
# tokens each (default 1,000,000: 65 MB of NDJSON, under server.maxBodyBytes = 128 MiB,
# while the whole list is far over its 256 MiB ceiling), started with its confirm_devices
# and sent to the h2o sink until completed. Prints after each part the time it took and the
# server's resident size (it must stay flat: memory is one part's, whatever the total), the
# highest resident size seen while sending, and the server's peak (VmHWM).
# With PUSHGATE_BENCH_SEND=0 the campaign is cancelled right after its start: the intake
# alone (10 million devices take about 50 minutes to send on the 2-core VM).
# Usage: Benchmarks/durable/parts.sh [DEVICES] [PART] [sqlite|pg]
set -euo pipefail
cd "$(dirname "$0")/../.."
total=${1:-10000000}
part=${2:-1000000}
backend=${3:-sqlite}
bin=.build/release/pushgate
bash scripts/release-build.sh --product pushgate >/dev/null
devices=1  # setup.sh's own token files stay small: the parts are written below
source Benchmarks/durable/setup.sh
source Benchmarks/durable/pgcluster.sh
trap 'pg_remove; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
now() { date +%s.%N; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

# The parts: part.0001, part.0002, … of $part tokens each, one token per line.
python3 - "$total" "$part" "$work" <<'PY'
import sys
total, size, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for n, first in enumerate(range(0, total, size), start=1):
    with open("%s/part.%04d" % (work, n), "w") as f:
        f.write("".join("%064x\n" % (0xabc << 200 | i) for i in range(first, min(first + size, total))))
PY
python3 - "$work/gateway.json" "$work/parts.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["server"]["maxBodyBytes"] = 128 << 20
json.dump(config, open(sys.argv[2], "w"))
PY
if [ "$backend" = pg ]; then
  pg_start
  pg_sql postgres "CREATE DATABASE bench_parts" >/dev/null
  python3 - "$work/parts.json" "$(pg_url bench_parts)" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["storage"] = {"url": sys.argv[2], "poolSize": 4}
json.dump(config, open(sys.argv[1], "w"))
PY
fi

"$bin" serve --config "$work/parts.json" 2> "$work/serve.err" &
gpid=$!
pids+=($gpid)
for _ in $(seq 400); do grep -q "listening on" "$work/serve.err" 2>/dev/null && break; sleep 0.05; done
api="http://127.0.0.1:$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.err" | head -1)/v1/campaigns"
echo "== $total devices in parts of $part ($(ls "$work"/part.* | wc -l) parts, $(du -cm "$work"/part.* | tail -1 | cut -f1) MB of NDJSON), $backend; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server RSS at idle: $(rss $gpid) kB"

start=$(now)
id=$(curl -sf -XPOST "$api?parts=true" -H 'Content-Type: application/json' \
       -d '{"alert":{"title":"Price drop","body":"The jacket you saved is 20% off today"},"deeplink":"https://example.com/product/42"}' \
     | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"] == "filling", d; print(d["id"])')
n=0
for f in "$work"/part.*; do
  n=$((n + 1))
  t0=$(now)
  code=$(curl -s -o "$work/receipt.json" -w '%{http_code}' -XPUT "$api/$id/parts/$n" \
           -H 'Content-Type: application/x-ndjson' --data-binary @"$f")
  [ "$code" = 201 ] || { echo "part $n: HTTP $code: $(head -c 400 "$work/receipt.json")"; exit 1; }
  printf 'part %4d: %s in %.2f s; server RSS %s kB\n' "$n" "$(cat "$work/receipt.json")" "$(awk -v a="$t0" -v b="$(now)" 'BEGIN {print b - a}')" "$(rss $gpid)"
done
filled=$(now)
started=$(curl -sf -XPOST "$api/$id/start" -H 'Content-Type: application/json' -d "{\"confirm_devices\": $total}" \
          | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["devices"])')
echo "started: $started after $(awk -v a="$start" -v b="$filled" 'BEGIN {printf "%.1f s", b - a}') of parts ($(awk -v a="$start" -v b="$filled" -v n="$total" 'BEGIN {printf "%.0f", n / (b - a)}') devices/s stored)"
if [ "${PUSHGATE_BENCH_SEND:-1}" = 0 ]; then
  echo "cancelled: $(curl -sf -XPOST "$api/$id/cancel" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["devices"])')"
  echo "server peak RSS (VmHWM) over the intake: $(awk '/VmHWM/ {print $2}' /proc/$gpid/status) kB"
  [ "$backend" = pg ] || echo "database: $(du -k "$work"/pushgate.db* | awk '{s+=$1} END {printf "%.0f MB", s/1024}') (with WAL)"
  kill -TERM $gpid; wait $gpid 2>/dev/null || true
  exit 0
fi
peak=0
while true; do
  status=$(curl -sf "$api/$id?per_page=1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["counts"]["delivered"])')
  r=$(rss $gpid); [ "$r" -gt "$peak" ] && peak=$r
  [ "${status%% *}" = completed ] && break
  sleep 1
done
done_at=$(now)
echo "completed: delivered ${status##* } in $(awk -v a="$filled" -v b="$done_at" 'BEGIN {printf "%.1f s", b - a}') ($(awk -v a="$filled" -v b="$done_at" -v n="$total" 'BEGIN {printf "%.0f", n / (b - a)}') notifications/s)"
echo "highest RSS seen while sending: $peak kB; server peak RSS (VmHWM): $(awk '/VmHWM/ {print $2}' /proc/$gpid/status) kB"
if [ "$backend" = pg ]; then
  echo "database: $(pg_sql postgres "SELECT pg_size_pretty(pg_database_size('bench_parts'))")"
else
  echo "database: $(du -k "$work"/pushgate.db* | awk '{s+=$1} END {printf "%.0f MB", s/1024}') (with WAL)"
fi
kill -TERM $gpid; wait $gpid 2>/dev/null || true
