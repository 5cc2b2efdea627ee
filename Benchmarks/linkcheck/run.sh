#!/usr/bin/env bash
# `pushgate check-link --stdin` (read, canonicalise, route, JSON Lines out) against
# libcurl's URL API (curl_url_set + curl_url_get per line, curl-url-lines.c) on the same
# 200,000 mixed links (PushgateBench's `links` corpus: 70% valid in many spellings, 30%
# hostile), output to /dev/null. The two run alternately, RUNS times each (41 by default,
# about 25 s); prints each run, the medians, and pushgate's time as a fraction of
# libcurl's (CPU and wall). Each child's user + system CPU comes from the kernel's rusage
# at microsecond resolution (cputime.py, os.wait4).
# Needs the release build (`make release`), cc, libcurl's headers and python3.
# PUSHGATE_BIN=PATH measures another pushgate binary (say, one built from an earlier commit).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${PUSHGATE_BIN:-.build/release/pushgate}  # another build, to compare before and after
bench=.build/release/PushgateBench
lines=${LINES_TOTAL:-200000}
runs=${RUNS:-41}
for b in "$bin" "$bench"; do [[ -x $b ]] || { echo "bench: $b is not built (run 'make release')" >&2; exit 2; }; done
mkdir -p .build/bench
ref=.build/bench/curl-url-lines
cc -O2 -o "$ref" Benchmarks/linkcheck/curl-url-lines.c $(pkg-config --cflags --libs libcurl)
corpus=.build/bench/links-$lines.txt
[[ -s $corpus ]] || "$bench" write-links "$corpus" "$lines"

# One run: prints "cpu wall peakKB" (user+sys seconds, elapsed seconds, max RSS).
measure() {
    local out cpu wall rss
    out=$(python3 Benchmarks/linkcheck/cputime.py "$corpus" "$@")
    read -r cpu wall rss <<< "$out"
    awk -v c="$cpu" -v w="$wall" -v r="$rss" 'BEGIN { printf "%.4f %.4f %d\n", c, w, r }'
}
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }

echo "== check-link --stdin vs libcurl URL API, $lines links ($(du -k "$corpus" | cut -f1) KB), $runs runs each, load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) UTC"
pg_cpu=() pg_wall=() cu_cpu=() cu_wall=() pair=() pg_rss=0
for ((i = 1; i <= runs; i++)); do
    m=$(measure "$bin" check-link --stdin); read -r c w r <<< "$m"
    pg_cpu+=("$c"); pg_wall+=("$w"); (( r > pg_rss )) && pg_rss=$r
    m=$(measure "$ref"); read -r c2 w2 r2 <<< "$m"
    cu_cpu+=("$c2"); cu_wall+=("$w2")
    q=$(awk -v a="$c" -v b="$c2" 'BEGIN { printf "%.3f", a / b }'); pair+=("$q")
    echo "run $i: pushgate CPU ${c}s wall ${w}s peak ${r} KB | libcurl CPU ${c2}s wall ${w2}s peak ${r2} KB | ${q}x"
done
pc=$(printf '%s\n' "${pg_cpu[@]}" | median); pw=$(printf '%s\n' "${pg_wall[@]}" | median)
cc_=$(printf '%s\n' "${cu_cpu[@]}" | median); cw=$(printf '%s\n' "${cu_wall[@]}" | median)
pq=$(printf '%s\n' "${pair[@]}" | median)
pmin=$(printf '%s\n' "${pair[@]}" | sort -n | head -1); pmax=$(printf '%s\n' "${pair[@]}" | sort -n | tail -1)
awk -v pc="$pc" -v pw="$pw" -v cc="$cc_" -v cw="$cw" -v n="$lines" -v rss="$pg_rss" \
    -v pq="$pq" -v pmin="$pmin" -v pmax="$pmax" 'BEGIN {
    printf "median pushgate check-link --stdin: CPU %.4fs (%.0f ns/line), wall %.4fs, peak %d KB\n", pc, pc * 1e9 / n, pw, rss
    printf "median libcurl curl_url_set+get:    CPU %.4fs (%.0f ns/line), wall %.4fs\n", cc, cc * 1e9 / n, cw
    printf "per-run CPU ratio: median %.3f, range %.3f-%.3f\n", pq, pmin, pmax
    printf "ratio pushgate/libcurl: %.3f CPU, %.3f wall (target <= 0.40)\n", pc / cc, (cw > 0 ? pw / cw : 0)
}'
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) UTC"
