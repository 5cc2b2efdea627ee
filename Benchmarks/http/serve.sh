# Sourced by the HTTP benchmarks: a release `pushgate serve` on Benchmarks/http/gateway.json
# (port 18080) with a fresh database, stopped when the script exits. Sets pid and rss().
bin=.build/release/pushgate
bash scripts/release-build.sh --product pushgate >/dev/null
command -v wrk >/dev/null || { echo "wrk missing (Debian package wrk; make deps installs it)"; exit 2; }
mkdir -p var
rm -f var/bench-http.db var/bench-http.db-shm var/bench-http.db-wal
"$bin" serve --config Benchmarks/http/gateway.json 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:18080/healthz >/dev/null && break; sleep 0.05; done
rss() { awk '/VmRSS/ {print $2 " kB"}' /proc/$pid/status; }
