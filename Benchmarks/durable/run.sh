#!/usr/bin/env bash
# Durable campaign benchmark: one campaign of N devices (default 1,000,000) POSTed (as
# application/x-ndjson: the campaign line, then one token per line) to a
# release build of `pushgate serve` (SQLite outbox, synchronous=FULL) and sent to a local
# h2o sink (Benchmarks/sink/h2o.conf, TLS, one thread), compared in the same run with the
# non-durable `pushgate send` of the same devices to the same sink.
# Prints, for each: wall time, notifications/s, peak RSS, process CPU; for serve also the
# time to the 202 and the database size.
# Usage: Benchmarks/durable/run.sh [DEVICES]
set -euo pipefail
cd "$(dirname "$0")/../.."
devices=${1:-1000000}
bin=.build/release/pushgate
bash scripts/release-build.sh --product pushgate >/dev/null
source Benchmarks/durable/setup.sh

cpu_of() { awk '{printf "%.1f", ($14+$15)/100}' "/proc/$1/stat"; }
now() { date +%s.%N; }
echo "== $devices devices; sink h2o on port $port (1 thread, TLS), 2 connections x 100 streams"

echo "-- pushgate send (not durable)"
/usr/bin/time -f "peak RSS: %M kB, CPU: %U s user + %S s system" \
  "$bin" send --campaign "$work/campaign.json" --devices "$work/tokens.txt" --config "$work/gateway.json" --json \
  > "$work/send.json" 2> "$work/send.err" &
spid=$!
start=$(now)
wait $spid || true
end=$(now)
tail -1 "$work/send.err"
awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "wall: %.2f s, %.0f notifications/s\n", e-s, n/(e-s)}'
send_rate=$(awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')

echo "-- pushgate serve (durable: SQLite outbox, synchronous=FULL)"
"$bin" serve --config "$work/gateway.json" 2> "$work/serve.err" &
gpid=$!
pids+=($gpid)
for _ in $(seq 200); do grep -q "listening on" "$work/serve.err" 2>/dev/null && break; sleep 0.05; done
gport=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.err" | head -1)
start=$(now)
id=$(curl -sf --data-binary @"$work/campaign.ndjson" -H 'Content-Type: application/x-ndjson' \
  "http://127.0.0.1:$gport/v1/campaigns" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
accepted=$(now)
while true; do
  status=$(curl -sf "http://127.0.0.1:$gport/v1/campaigns/$id?per_page=1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["counts"]["delivered"])')
  [ "${status%% *}" = completed ] && break
  sleep 0.2
done
end=$(now)
echo "202 after: $(awk -v s="$start" -v e="$accepted" 'BEGIN {printf "%.2f s", e-s}') (campaign and $devices device rows committed)"
echo "delivered: ${status##* }"
awk -v s="$start" -v e="$end" -v a="$accepted" -v n="$devices" \
  'BEGIN {printf "wall (POST to completed): %.2f s, %.0f notifications/s (sending alone: %.0f/s)\n", e-s, n/(e-s), n/(e-a)}'
serve_rate=$(awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')
echo "peak RSS: $(awk '/VmHWM/ {print $2 " kB"}' /proc/$gpid/status), CPU: $(cpu_of $gpid) s"
kill -TERM $gpid; wait $gpid 2>/dev/null || true
echo "database: $(du -k "$work"/pushgate.db* | awk '{s+=$1} END {printf "%.0f MB", s/1024}') (with WAL)"
awk -v a="$serve_rate" -v b="$send_rate" 'BEGIN {printf "durable / send throughput: %.2f\n", a/b}'
