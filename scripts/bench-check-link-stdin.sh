#!/usr/bin/env bash
# Throughput of `pushgate check-link --stdin` (read, canonicalise, JSON Lines out) over
# about 1M lines cycling through config/sample-links.txt (7 valid, 10 hostile links).
# Needs the release binary (`make release`) and /usr/bin/time. Prints each run's CPU
# time and peak memory, then the median CPU time per line.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release/pushgate
lines=${LINES_TOTAL:-1000000}
runs=${RUNS:-5}
[[ -x $bin ]] || { echo "bench: $bin is not built (run 'make release')" >&2; exit 2; }
corpus=$(mktemp)
trap 'rm -f "$corpus"' EXIT
python3 - "$lines" "$corpus" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
links = open("config/sample-links.txt", "rb").read().splitlines()
with open(path, "wb") as f:
    f.write(b"".join(links[i % len(links)] + b"\n" for i in range(n)))
PY
cpu=()
for ((i = 0; i < runs; i++)); do
    stats=$( { /usr/bin/time -f "%U %S %e %M" "$bin" check-link --stdin < "$corpus" > /dev/null; } 2>&1 | tail -1 ) || true
    read -r user sys wall rss <<< "$stats"
    echo "run $((i + 1)): user ${user}s sys ${sys}s wall ${wall}s peak ${rss} KB"
    cpu+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')")
done
median=$(printf '%s\n' "${cpu[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
awk -v m="$median" -v n="$lines" 'BEGIN { printf "median CPU %.2fs for %d lines: %.0f ns/line, %.0f lines/s\n", m, n, m * 1e9 / n, n / m }'
