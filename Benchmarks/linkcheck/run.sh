#!/usr/bin/env bash
# `pushgate check-link --stdin` (read, canonicalise, route, JSON Lines out) against
# libcurl's URL API (curl_url_set + curl_url_get per line, curl-url-lines.c) on the same
# 200,000 mixed links (PushgateBench's `links` corpus: 70% valid in many spellings, 30%
# hostile), output to /dev/null. The two run alternately, RUNS times each; prints each
# run, the medians, and pushgate's time as a fraction of libcurl's (CPU and wall).
# Needs the release build (`make release`), cc, libcurl's headers and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=.build/release/pushgate
bench=.build/release/PushgateBench
lines=${LINES_TOTAL:-200000}
runs=${RUNS:-7}
for b in "$bin" "$bench"; do [[ -x $b ]] || { echo "bench: $b is not built (run 'make release')" >&2; exit 2; }; done
mkdir -p .build/bench
ref=.build/bench/curl-url-lines
cc -O2 -o "$ref" Benchmarks/linkcheck/curl-url-lines.c $(pkg-config --cflags --libs libcurl)
corpus=.build/bench/links-$lines.txt
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
[[ -s $corpus ]] || "$bench" write-links "$corpus" "$lines"

# One run: prints "cpu wall peakKB" (user+sys seconds, elapsed seconds, max RSS).
measure() {
    local user sys wall rss
    /usr/bin/time -o "$stats" -f "%U %S %e %M" "$@" < "$corpus" > /dev/null 2>/dev/null || true
    read -r user sys wall rss < <(tail -1 "$stats")
    awk -v u="$user" -v s="$sys" -v w="$wall" -v r="$rss" 'BEGIN { printf "%.3f %.2f %d\n", u + s, w, r }'
}
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }

echo "== check-link --stdin vs libcurl URL API, $lines links ($(du -k "$corpus" | cut -f1) KB), $runs runs each"
pg_cpu=() pg_wall=() cu_cpu=() cu_wall=() pg_rss=0
for ((i = 1; i <= runs; i++)); do
    read -r c w r < <(measure "$bin" check-link --stdin)
    pg_cpu+=("$c"); pg_wall+=("$w"); (( r > pg_rss )) && pg_rss=$r
    read -r c2 w2 r2 < <(measure "$ref")
    cu_cpu+=("$c2"); cu_wall+=("$w2")
    echo "run $i: pushgate CPU ${c}s wall ${w}s peak ${r} KB | libcurl CPU ${c2}s wall ${w2}s peak ${r2} KB"
done
pc=$(printf '%s\n' "${pg_cpu[@]}" | median); pw=$(printf '%s\n' "${pg_wall[@]}" | median)
cc_=$(printf '%s\n' "${cu_cpu[@]}" | median); cw=$(printf '%s\n' "${cu_wall[@]}" | median)
awk -v pc="$pc" -v pw="$pw" -v cc="$cc_" -v cw="$cw" -v n="$lines" -v rss="$pg_rss" 'BEGIN {
    printf "median pushgate check-link --stdin: CPU %.3fs (%.0f ns/line), wall %.2fs, peak %d KB\n", pc, pc * 1e9 / n, pw, rss
    printf "median libcurl curl_url_set+get:    CPU %.3fs (%.0f ns/line), wall %.2fs\n", cc, cc * 1e9 / n, cw
    printf "ratio pushgate/libcurl: %.2f CPU, %.2f wall (target <= 0.40)\n", pc / cc, (cw > 0 ? pw / cw : 0)
}'
