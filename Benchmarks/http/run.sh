#!/usr/bin/env bash
# HTTP API benchmark: wrk at 64 connections (one client thread) against a release build of
# `pushgate serve` (request log on, sent to /dev/null), for POST /v1/links/check and
# POST /v1/notifications/preview. Prints throughput, latency percentiles, errors, and the
# server's RSS before and after.
# Usage: Benchmarks/http/run.sh [LINK_SECONDS] [PREVIEW_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
link_seconds=${1:-60}
preview_seconds=${2:-20}

source Benchmarks/http/serve.sh
cpu() { awk '{printf "%.1f", ($14+$15)/100}' /proc/$pid/stat; }

run() { # title seconds body-file path
  echo "== $1, 64 connections, $2 s"
  local before; before=$(cpu)
  BODY_FILE="$3" wrk -t1 -c64 -d"$2"s -s Benchmarks/http/post.lua "http://127.0.0.1:18080$4" | sed -n '/^requests:/,$p'
  echo "server CPU: $(awk -v a="$before" -v b="$(cpu)" -v s="$2" 'BEGIN {printf "%.0f%% of one core", (b-a)/s*100}')"
}

echo "server RSS at start: $(rss)"
BODY_FILE=Benchmarks/http/link.json wrk -t1 -c64 -d3s -s Benchmarks/http/post.lua \
  http://127.0.0.1:18080/v1/links/check >/dev/null
echo "server RSS after warm-up: $(rss)"
run "POST /v1/links/check" "$link_seconds" Benchmarks/http/link.json /v1/links/check
echo "server RSS after link checks: $(rss)"
run "POST /v1/notifications/preview" "$preview_seconds" config/campaigns/inline-alert.json /v1/notifications/preview
echo "server RSS after previews: $(rss)"
