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
swift build -c release --product pushgate >/dev/null
work=$(mktemp -d /tmp/pushgate-durable-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# The sink, with a throwaway CA.
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
echo "subjectAltName=IP:127.0.0.1" > "$work/ext.cnf"
openssl req -x509 "${ec[@]}" -keyout "$work/ca.key" -out "$work/ca.pem" -days 1 -subj "/CN=bench CA" 2>/dev/null
openssl req "${ec[@]}" -keyout "$work/server.key" -out "$work/server.csr" -subj "/CN=localhost" 2>/dev/null
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -out "$work/server.pem" -days 1 -extfile "$work/ext.cnf" 2>/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -e "s|@PORT@|$port|" -e "s|@CERT@|$work/server.pem|" -e "s|@KEY@|$work/server.key|" -e "s|@LOG@|$work/h2o.log|" \
  Benchmarks/sink/h2o.conf > "$work/h2o.conf"
h2o -c "$work/h2o.conf" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done

# The devices, as a token list for send and as a campaign body for serve.
python3 - "$devices" "$work" <<'PY'
import sys
n, work = int(sys.argv[1]), sys.argv[2]
tokens = ["%064x" % (0xabc << 200 | i) for i in range(n)]
with open(work + "/tokens.txt", "w") as f:
    f.write("\n".join(tokens) + "\n")
# A campaign this big must confirm its device count (guard.confirmAbove).
head = '{"alert":{"title":"Price drop","body":"The jacket you saved is 20%% off today"},"deeplink":"https://example.com/product/42","confirm_devices":%d' % n
with open(work + "/campaign.json", "w") as f:
    f.write(head + "}\n")
with open(work + "/campaign.ndjson", "w") as f:
    f.write(head + "}\n" + "\n".join(tokens) + "\n")
PY
root=$(pwd)
cat > "$work/gateway.json" <<JSON
{"topic": "com.example.shop", "routes": "$root/config/routes.json", "templates": "$root/Templates",
 "apns": {"url": "https://127.0.0.1:$port", "caFile": "$work/ca.pem", "teamId": "TEAM123456", "keyId": "KEY1234567",
          "keyFile": "$root/Tests/APNsTests/Fixtures/test-key.p8", "connections": 2},
 "server": {"listen": "127.0.0.1:0", "requestLog": "off", "maxBodyBytes": 268435456, "connectionTimeoutSeconds": 600},
 "storage": {"path": "$work/pushgate.db", "synchronous": "full"}}
JSON

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
