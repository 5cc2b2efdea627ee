#!/usr/bin/env bash
# Probes under long work. The same open-loop probe client (Benchmarks/http/probe-client.py:
# 60 probes a second over /healthz, /readyz and /metrics, each on a new connection and on a
# kept-alive one) runs twice against one server: first with the worker pool idle (the
# reference), then while 30 connections posting 1 MiB previews (15,000 devices each)
# keep the pool busy. Prints each series' latency percentiles, the previews' outcome, the
# load average, and the server's RSS at idle, at the end of the load and 2 s later.
# With PUSHGATE_BENCH_OWN_WEIGHT=1 (root, kernel autogroups) the benchmark runs in a session
# of its own whose autogroup has nice -19, so the builds of other sessions on a shared
# machine weigh little against it; the server's own workers still compete in full.
# Usage: [PUSHGATE_BENCH_OWN_WEIGHT=1] Benchmarks/http/probes.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${PUSHGATE_BENCH_OWN_WEIGHT:-}" = 1 ] && [ -z "${PUSHGATE_BENCH_IN_SESSION:-}" ]; then
  exec env PUSHGATE_BENCH_IN_SESSION=1 setsid --wait bash "$0" "$@"
fi
if [ -n "${PUSHGATE_BENCH_IN_SESSION:-}" ]; then
  echo -19 > /proc/self/autogroup
  echo "session weight: $(cat /proc/self/autogroup)"
fi
seconds=${1:-20}
mkdir -p var
body=var/bench-preview-1mib.json
python3 - "$body" <<'PY'
import sys
devices = ",".join('"%064x"' % (0x1000 + i) for i in range(15000))
open(sys.argv[1], "w").write('{"alert":{"title":"Sale","body":"Up to 40% off"},'
    '"deeplink":"https://example.com/product/42","devices":[' + devices + ']}')
PY

source Benchmarks/http/serve.sh
echo "server RSS at idle: $(rss)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $seconds s of probes, worker pool idle (reference)"
python3 Benchmarks/http/probe-client.py 18080 "$seconds"
echo "== $seconds s of probes while 30 connections post 1 MiB previews ($(wc -c <"$body") bytes each)"
BODY_FILE="$body" wrk -t1 -c30 -d"$((seconds + 2))"s --timeout 30s -s Benchmarks/http/post.lua \
  http://127.0.0.1:18080/v1/notifications/preview > var/bench-previews.txt &
load=$!
sleep 1
python3 Benchmarks/http/probe-client.py 18080 "$seconds"
wait $load
sed -n '/^requests:/,$p' var/bench-previews.txt | sed 's/^/previews: /'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server RSS at the end of the load: $(rss)"
sleep 2
echo "server RSS 2 s later: $(rss)"
