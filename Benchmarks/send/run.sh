#!/usr/bin/env bash
# `pushgate send` against the bare libcurl program, process to process: N devices (default
# 100,000) read from a file and sent to the local h2o sink (Benchmarks/sink/h2o.conf, TLS,
# one thread, every answer 200), in ROUNDS (default 5) alternating pairs:
#   bare  Benchmarks/bare-curl/bare_curl.c, the same N APNs-shaped requests over 2
#         connections on 2 threads (pushgate's default pool), nothing else;
#   send  `pushgate send --campaign C --devices FILE` (release build): the plan, the
#         throwaway outbox (intake into SQLite, the dispatcher, the results), the report;
#   ids   bare again, each request with its own apns-id as send's have (the sink echoes
#         it): what that header alone costs, printed beside; bare stays the reference.
#   base  with BASELINE=/path/to/another/pushgate: that build's `send` of the same devices
#         beside this one's each round, after it in odd rounds and before it in even ones
#         (a change measured against the build before it).
# Each side is timed as a whole process (wall clock from start to exit, CPU from
# /usr/bin/time). Prints each round, then the medians: the rates, send's rate as a ratio of
# bare's (pair by pair), CPU per device of each, send's peak RSS, and the load average.
# Usage: [BASELINE=PUSHGATE] Benchmarks/send/run.sh [DEVICES] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
devices=${1:-100000}
rounds=${2:-5}
bin=.build/release/pushgate
bash scripts/release-build.sh --product pushgate >/dev/null
fail_every=0
source Benchmarks/durable/setup.sh
cc -O2 -o "$work/bare_curl" Benchmarks/bare-curl/bare_curl.c -lcurl -lpthread
body='{"aps":{"alert":{"title":"Price drop","body":"The jacket you saved is 20% off today"}},"deeplink":"https://example.com/product/42"}'
# The campaign without the guard's confirmation inside: given on the command line.
sed 's/,"confirm_devices":[0-9]*//' "$work/campaign.json" > "$work/send-campaign.json"

now() { date +%s.%N; }

# One build's `send` of the devices ($1: its binary, $2: a name for its files), timed as a
# whole process; writes "rate CPU-µs-per-device peak-RSS-kB" to $work/$2.result. Not in a
# subshell, so a failure exits the script.
timed_send() {
  local start end
  start=$(now)
  /usr/bin/time -f "%U %S %M" -o "$work/$2.time" "$1" send --campaign "$work/send-campaign.json" --devices "$work/tokens.txt" \
    --config "$work/gateway.json" --confirm-devices "$devices" > "$work/$2.out" 2> "$work/$2.err" || { cat "$work/$2.err"; exit 1; }
  end=$(now)
  grep -q "^delivered *$devices$" "$work/$2.out" || { echo "$1 send did not deliver every device:"; cat "$work/$2.out"; exit 1; }
  awk -v s="$start" -v e="$end" -v n="$devices" '{printf "%.0f %.1f %s\n", n/(e-s), ($1+$2)*1e6/n, $3}' "$work/$2.time" > "$work/$2.result"
}

echo "== $devices devices, $rounds rounds; sink h2o on port $port (1 thread, TLS); load average $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$work/results"
for round in $(seq "$rounds"); do
  start=$(now)
  /usr/bin/time -f "%U %S %M" -o "$work/bare.time" "$work/bare_curl" "https://127.0.0.1:$port" "$work/ca.pem" "$devices" "$body" 2 > "$work/bare.out"
  end=$(now)
  bare_rate=$(awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')
  bare_cpu=$(tail -1 "$work/bare.time" | awk -v n="$devices" '{printf "%.1f", ($1+$2)*1e6/n}')
  start=$(now)
  "$work/bare_curl" "https://127.0.0.1:$port" "$work/ca.pem" "$devices" "$body" 2 ids > "$work/ids.out"
  end=$(now)
  ids_rate=$(awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')
  # The baseline goes first in every other round: the second of two runs back to back
  # can be the faster one.
  [ -n "${BASELINE:-}" ] && (( round % 2 == 0 )) && timed_send "$BASELINE" base
  timed_send "$bin" send
  [ -n "${BASELINE:-}" ] && (( round % 2 == 1 )) && timed_send "$BASELINE" base
  read -r send_rate send_cpu send_rss < "$work/send.result"
  if [ -n "${BASELINE:-}" ]; then
    read -r base_rate base_cpu _ < "$work/base.result"
    echo "$base_rate $base_cpu" >> "$work/base-results"
  fi
  ratio=$(awk -v a="$send_rate" -v b="$bare_rate" 'BEGIN {printf "%.3f", a/b}')
  ids_ratio=$(awk -v a="$send_rate" -v b="$ids_rate" 'BEGIN {printf "%.3f", a/b}')
  echo "round $round: bare $bare_rate/s ($bare_cpu µs CPU/device), send $send_rate/s ($send_cpu µs CPU/device, peak RSS $send_rss kB): ${ratio}× bare; bare with apns-ids $ids_rate/s, send ${ids_ratio}× it${BASELINE:+; baseline send $base_rate/s ($base_cpu µs CPU/device)}; load $(cut -d' ' -f1 /proc/loadavg)"
  echo "$bare_rate $bare_cpu $send_rate $send_cpu $send_rss $ratio $ids_rate $ids_ratio" >> "$work/results"
done
col() { awk -v c="$1" '{print $c}' "$work/results" | median; }
if [ -n "${BASELINE:-}" ]; then
  echo "baseline median: send $(awk '{print $1}' "$work/base-results" | median)/s at $(awk '{print $2}' "$work/base-results" | median) µs CPU/device ($BASELINE)"
fi
echo "median: bare $(col 1)/s at $(col 2) µs CPU/device; send $(col 3)/s at $(col 4) µs CPU/device, peak RSS $(col 5) kB; send/bare $(col 6)× (pair by pair); bare with apns-ids $(col 7)/s, send $(col 8)× it; load average $(cut -d' ' -f1-3 /proc/loadavg)"
