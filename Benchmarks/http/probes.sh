#!/usr/bin/env bash
# Probes under long work: 30 connections posting 1 MiB previews (15,000 devices each)
# keep the worker pool and its queue full, while /healthz, /readyz and /metrics are
# each measured by a one-connection wrk. Prints the probes' latency percentiles, how many
# previews were answered 503 `overloaded`, and the server's RSS at idle, at the end of
# the load, and 2 s after it (memory given back after big requests).
# Usage: Benchmarks/http/probes.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
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
echo "== $seconds s: 30 connections of 1 MiB previews ($(wc -c <"$body") bytes each)"
BODY_FILE="$body" wrk -t1 -c30 -d"$((seconds + 2))"s --timeout 30s -s Benchmarks/http/post.lua \
  http://127.0.0.1:18080/v1/notifications/preview > var/bench-previews.txt &
load=$!
sleep 1
for probe in healthz readyz metrics; do
  echo "-- /$probe while the pool is full"
  wrk -t1 -c1 -d"$((seconds / 3))"s -s Benchmarks/http/post.lua "http://127.0.0.1:18080/$probe" | sed -n '/^requests:/,$p'
done
wait $load
sed -n '/^requests:/,$p' var/bench-previews.txt | sed 's/^/previews: /'
echo "server RSS at the end of the load: $(rss)"
sleep 2
echo "server RSS 2 s later: $(rss)"
