#!/usr/bin/env bash
# Durable campaign benchmark: one campaign of N devices (default 1,000,000) POSTed (as
# application/x-ndjson: the campaign line, then one token per line) to a release build of
# `pushgate serve` and sent to a local h2o sink (Benchmarks/sink/h2o.conf, TLS, one
# thread; 1% of the devices answered 410 Unregistered), each of these in the same run:
#   bare    the bare libcurl program (Benchmarks/bare-curl) with as many requests: the transport's ceiling;
#   send    `pushgate send` of the same devices to the same sink: the same outbox, on a
#           throwaway SQLite store of its own (synchronous NORMAL), in one process;
#   sqlite  one serve on SQLite (synchronous=FULL);
#   pg1     one serve on PostgreSQL (a throwaway cluster with fsync and synchronous_commit
#           on, Benchmarks/durable/pgcluster.sh);
#   pg2     two serves sharing one PostgreSQL database, the campaign POSTed to the first;
#           they share this host, so each opens half of send's connections (one each);
#   pgsnap  pg1 while another session holds a REPEATABLE READ snapshot open the whole run
#           (as a long report does);
#   claims  the storage alone (`PushgateBench claim-time`): a dispatcher turn's time in a
#           campaign of 100,000 and of 10,000,000 devices, on SQLite and on PostgreSQL.
# Prints, for each: wall time, notifications/s, peak RSS and CPU per process; for serve also
# the time to the 202 and the database size. For PostgreSQL also the server's CPU, the claim statements'
# times (pg_stat_statements) and the lock waits: the gateway's connections in
# pg_stat_activity and the ungranted pg_locks sampled every 0.1 s while the campaign sends,
# and every wait over 100 ms the server logged (log_lock_waits).
# Ends with one line per durable run: its rate as a ratio of send's (send's own rate and the
# load average printed with it), gateway CPU per device (send's beside it), and for the
# stores bytes per device kept (indexes included, after the campaign finished) and written
# (PostgreSQL: WAL; SQLite: everything the process wrote to disk, WAL and checkpoints, and
# beside it the WAL alone: frames the process wrote, from its pushgate_storage_journal_bytes_total).
# The scenarios run ROUNDS times (default 3; `claims` once), in turn, so each round's send
# is the reference for that round's durable runs; the summary gives the medians, and each
# ratio as the median of the rounds' ratios.
# Usage: ROUNDS=N Benchmarks/durable/run.sh [DEVICES] [bare|send|sqlite|pg1|pg2|pgsnap|claims ...]
#        (default: bare send sqlite pg1 pg2 pgsnap)
set -euo pipefail
cd "$(dirname "$0")/../.."
devices=${1:-1000000}
shift $(( $# > 0 ? 1 : 0 ))
scenarios=${*:-bare send sqlite pg1 pg2 pgsnap}
rounds=${ROUNDS:-3}
bin=.build/release/pushgate
bash scripts/release-build.sh --product pushgate >/dev/null
[[ " $scenarios " == *" claims "* ]] && bash scripts/release-build.sh --product PushgateBench >/dev/null
source Benchmarks/durable/setup.sh
source Benchmarks/durable/pgcluster.sh
trap 'pg_remove; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

cpu_of() { awk '{printf "%.1f", ($14+$15)/100}' "/proc/$1/stat"; }
now() { date +%s.%N; }
declare -A rates cpu_us pg_us stored written journal
# Every round's figures, per label: "value value …".
declare -A all_rates all_cpu all_pg all_stored all_written all_journal all_vs_send all_vs_bare all_cpu_vs_send all_snap
round=1
echo "== $devices devices; sink h2o on port $port (1 thread, TLS), 2 connections x 100 streams; load average $(cut -d' ' -f1-3 /proc/loadavg)"

run_send() {
  echo "-- pushgate send (its own throwaway SQLite outbox, synchronous NORMAL)"
  /usr/bin/time -f "peak RSS: %M kB, CPU: %U s user + %S s system" \
    "$bin" send --campaign "$work/campaign.json" --devices "$work/tokens.txt" --config "$work/gateway.json" --json \
    > "$work/send.json" 2> "$work/send.err" &
  local spid=$! start end
  start=$(now)
  wait $spid || true
  end=$(now)
  tail -1 "$work/send.err"
  cpu_us[send]=$(sed -n 's|.*CPU: \([0-9.]*\) s user + \([0-9.]*\) s system.*|\1 \2|p' "$work/send.err" \
    | awk -v n="$devices" '{printf "%.1f", ($1 + $2) * 1e6 / n}')
  awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "wall: %.2f s, %.0f notifications/s\n", e-s, n/(e-s)}'
  rates[send]=$(awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')
}

# The transport's ceiling: Benchmarks/bare-curl/bare_curl.c, the same number of APNs-shaped
# requests over 2 connections on 2 threads, nothing else.
run_bare() {
  echo "-- bare libcurl (Benchmarks/bare-curl/bare_curl.c, 2 threads)"
  cc -O2 -o "$work/bare_curl" Benchmarks/bare-curl/bare_curl.c -lcurl -lpthread
  local start end
  start=$(now)
  /usr/bin/time -f "%U %S %M" -o "$work/bare.time" "$work/bare_curl" "https://127.0.0.1:$port" "$work/ca.pem" "$devices" \
    '{"aps":{"alert":{"title":"Price drop","body":"The jacket you saved is 20% off today"}}}' 2 > /dev/null \
    || true  # exit 1: not every answer was 200 (the sink's 410s)
  end=$(now)
  # The last line: /usr/bin/time writes "Command exited with non-zero status 1" before it.
  cpu_us[bare]=$(tail -1 "$work/bare.time" | awk -v n="$devices" '{printf "%.1f", ($1 + $2) * 1e6 / n}')
  rates[bare]=$(awk -v s="$start" -v e="$end" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')
  echo "wall: $(awk -v s="$start" -v e="$end" 'BEGIN {printf "%.2f", e-s}') s, ${rates[bare]} requests/s, ${cpu_us[bare]} us CPU/request"
}

# serve_run LABEL CONFIG INSTANCES: starts the instances on one configuration, POSTs the
# campaign to the first and polls it until completed. Sets accepted_at and completed_at
# (epoch seconds) and rates[LABEL].
serve_run() {
  local label=$1 config=$2 count=$3 gpids=() gports=() i start status
  for i in $(seq "$count"); do
    "$bin" serve --config "$config" 2> "$work/$label-$i.err" &
    gpids+=($!)
    pids+=($!)
  done
  for i in $(seq "$count"); do
    for _ in $(seq 400); do grep -q "listening on" "$work/$label-$i.err" 2>/dev/null && break; sleep 0.05; done
    gports+=("$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/$label-$i.err" | head -1)")
  done
  local api="http://127.0.0.1:${gports[0]}/v1/campaigns"
  start=$(now)
  local id
  id=$(curl -sf --data-binary @"$work/campaign.ndjson" -H 'Content-Type: application/x-ndjson' "$api" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  accepted_at=$(now)
  # One poller process for the whole campaign (a process started per poll costs more CPU
  # than the poll: on two cores that would be taken from the gateway being measured).
  status=$(python3 - "$api/$id?per_page=1" <<'PY'
import json, sys, time, urllib.request
while True:
    with urllib.request.urlopen(sys.argv[1]) as answer:
        d = json.load(answer)
    if d["status"] == "completed":
        print(d["status"], d["counts"]["delivered"])
        break
    time.sleep(0.1)
PY
)
  completed_at=$(now)
  echo "202 after: $(awk -v s="$start" -v e="$accepted_at" 'BEGIN {printf "%.2f s", e-s}') (campaign and $devices device rows committed)"
  echo "delivered: ${status##* }"
  awk -v s="$start" -v e="$completed_at" -v a="$accepted_at" -v n="$devices" \
    'BEGIN {printf "wall (POST to completed): %.2f s, %.0f notifications/s (sending alone: %.0f/s)\n", e-s, n/(e-s), n/(e-a)}'
  rates[$label]=$(awk -v s="$start" -v e="$completed_at" -v n="$devices" 'BEGIN {printf "%.0f", n/(e-s)}')
  local cpu_total=0
  for i in $(seq 0 $((count - 1))); do
    cpu_total=$(awk -v a="$cpu_total" -v b="$(cpu_of "${gpids[$i]}")" 'BEGIN {print a + b}')
    written_bytes=$(awk '/^write_bytes/ {print $2}' "/proc/${gpids[$i]}/io")
    local sent metrics
    metrics=$(curl -sf "http://127.0.0.1:${gports[$i]}/metrics")
    sent=$(awk '/^pushgate_notifications_total/ && /result="delivered"/ {s += $NF} END {printf "%.0f", s}' <<< "$metrics")
    journal_bytes=$(awk '/^pushgate_storage_journal_bytes_total/ {print $NF}' <<< "$metrics")
    echo "instance $((i + 1)): delivered $sent, peak RSS: $(awk '/VmHWM/ {print $2 " kB"}' /proc/${gpids[$i]}/status), CPU: $(cpu_of ${gpids[$i]}) s"
  done
  cpu_us[$label]=$(awk -v c="$cpu_total" -v n="$devices" 'BEGIN {printf "%.1f", c * 1e6 / n}')
  for p in "${gpids[@]}"; do kill -TERM "$p"; done
  for p in "${gpids[@]}"; do wait "$p" 2>/dev/null || true; done
}

run_sqlite() {
  echo "-- pushgate serve (durable: SQLite outbox, synchronous=FULL)"
  rm -f "$work"/pushgate.db*  # a fresh database each round
  serve_run sqlite "$work/gateway.json" 1
  echo "database: $(du -k "$work"/pushgate.db* | awk '{s+=$1} END {printf "%.0f MB", s/1024}') (with WAL)"
  # Pages in use (not free), every table and index; the process's disk writes.
  stored[sqlite]=$(python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); q = lambda s: db.execute(s).fetchone()[0]
print("%.0f" % ((q("PRAGMA page_count") - q("PRAGMA freelist_count")) * q("PRAGMA page_size") / int(sys.argv[2])))' "$work/pushgate.db" "$devices")
  written[sqlite]=$(awk -v b="$written_bytes" -v n="$devices" 'BEGIN {printf "%.0f", b / n}')
  [ -n "$journal_bytes" ] && journal[sqlite]=$(awk -v b="$journal_bytes" -v n="$devices" 'BEGIN {printf "%.0f", b / n}')
  echo "WAL written: $(awk -v b="${journal_bytes:-0}" 'BEGIN {printf "%.1f MB", b / 1048576}') (frames; the process wrote $(awk -v b="$written_bytes" 'BEGIN {printf "%.1f MB", b / 1048576}') in all)"
}

# run_postgres LABEL INSTANCES: a database of its own in the cluster, the instances on it,
# its lock-wait samples taken while the campaign sends.
run_postgres() {
  local label=$1 count=$2 db=bench_$1_$round lsn snapshot=""
  echo "-- pushgate serve x $count (durable: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'), synchronous_commit=on, one database)"
  [ -n "$pgdir" ] || { pg_start; pg_sql postgres "CREATE EXTENSION pg_stat_statements" >/dev/null; }
  pg_sql postgres "CREATE DATABASE $db" >/dev/null
  python3 - "$work/gateway.json" "$work/$label.json" "$(pg_url "$db")" "$count" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["storage"] = {"url": sys.argv[3], "poolSize": 4}
# The instances share this host's cores and the sink: together they open as many
# connections (and run as many transport threads) as one does, and as send does.
config["apns"]["connections"] = max(1, config["apns"]["connections"] // int(sys.argv[4]))
json.dump(config, open(sys.argv[2], "w"))
PY
  lsn=$(pg_sql postgres "SELECT pg_current_wal_lsn()")
  # The gateway's connections (application_name pushgate) running a statement, those
  # waiting for a lock, the locks not granted, and what the running ones wait on; line
  # buffered, so what was sampled is in the file when the sampler is killed.
  printf '%s \\watch 0.1\n' "SELECT extract(epoch FROM clock_timestamp())::numeric(16,2),
      count(*) FILTER (WHERE state = 'active'), count(*) FILTER (WHERE state = 'active' AND wait_event_type = 'Lock'),
      (SELECT count(*) FROM pg_locks WHERE NOT granted),
      coalesce(string_agg(wait_event_type || ':' || wait_event, ',') FILTER (WHERE state = 'active' AND wait_event IS NOT NULL), '-')
    FROM pg_stat_activity WHERE datname = '$db' AND application_name = 'pushgate'" \
    | stdbuf -oL psql -X -q -A -t -F " " -h 127.0.0.1 -p "$pgport" -U postgres -d postgres > "$work/$label-samples.txt" 2>/dev/null &
  local sampler=$!
  pids+=($sampler)
  if [ "$label" = pgsnap ]; then
    # Another session's snapshot, held open from before the campaign to after it: rows
    # deleted or rewritten meanwhile cannot be vacuumed away.
    # psql reads a fifo this script holds open: closing it ends the session (no process
    # left behind holding the output).
    rm -f "$work/snapshot.fifo"
    mkfifo "$work/snapshot.fifo"
    psql -X -q -h 127.0.0.1 -p "$pgport" -U postgres -d "$db" < "$work/snapshot.fifo" > /dev/null 2>&1 &
    snapshot=$!
    pids+=($snapshot)
    exec {hold}> "$work/snapshot.fifo"
    echo "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class;" >&$hold
    sleep 0.5
    echo "a REPEATABLE READ snapshot is held open by another session: $(pg_sql postgres "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db' AND backend_xmin IS NOT NULL AND state = 'idle in transaction'") session(s)"
  fi
  local cpu_before
  cpu_before=$(pg_cpu)
  serve_run "$label" "$work/$label.json" "$count"
  kill "$sampler" 2>/dev/null || true
  [ -n "$snapshot" ] && { exec {hold}>&-; wait "$snapshot" 2>/dev/null || true; }
  sleep 1  # the gateway's backends exit after it
  local pg_seconds
  pg_seconds=$(awk -v a="$cpu_before" -v b="$(pg_cpu)" 'BEGIN {printf "%.1f", b - a}')
  echo "PostgreSQL server CPU: $pg_seconds s (all its processes, from the instances' start to their exit)"
  pg_us[$label]=$(awk -v c="$pg_seconds" -v n="$devices" 'BEGIN {printf "%.1f", c * 1e6 / n}')
  # Every table and index of the database, TOAST included, after the campaign finished.
  stored[$label]=$(pg_sql "$db" "SELECT round(sum(pg_total_relation_size(relid)) / $devices.0) FROM pg_stat_user_tables")
  written[$label]=$(pg_sql postgres "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn') / $devices.0)")
  echo "dead tuples left: $(pg_sql "$db" "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables")"
  echo "database: $(pg_sql postgres "SELECT pg_size_pretty(pg_database_size('$db'))"), WAL written: $(pg_sql postgres "SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn'))")"
  echo "claim statements (pg_stat_statements; ms per call):"
  # Labelled by text pg_stat_statements keeps (it replaces constants with $n).
  pg_sql postgres "SELECT format('  %-28s %8s calls, mean %6s, max %8s, stddev %6s', CASE
        WHEN query LIKE '%FROM campaigns%SKIP LOCKED%' THEN 'sendable campaigns'
        WHEN query LIKE '%state IN (%SKIP LOCKED%' THEN 'stopped campaigns closed'
        WHEN query LIKE '%ORDER BY lease_until%SKIP LOCKED%' THEN 'expired leases taken over'
        WHEN query LIKE '%(next_at, idx) >%SKIP LOCKED%' THEN 'pending after the frontier'
        WHEN query LIKE '%ORDER BY next_at, idx%SKIP LOCKED%' THEN 'retries; pending from start'
        WHEN query LIKE 'UPDATE deliveries d SET state = u.state%' THEN 'results recorded'
        WHEN query LIKE 'SELECT DISTINCT campaign FROM deliveries%' THEN 'expired leases looked up'
        WHEN query LIKE '%SELECT min(t) FROM%' THEN 'next due time'
        WHEN query = 'COMMIT' THEN 'COMMIT (every transaction)'
        ELSE left(regexp_replace(query, '\s+', ' ', 'g'), 26) END,
      calls, round(mean_exec_time::numeric, 2), round(max_exec_time::numeric, 2), round(stddev_exec_time::numeric, 2))
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')
      AND (query LIKE '%SKIP LOCKED%' OR query LIKE 'UPDATE deliveries d SET state = u.state%' OR query = 'COMMIT'
           OR query LIKE 'SELECT DISTINCT campaign FROM deliveries%' OR query LIKE '%SELECT min(t) FROM%')
    ORDER BY calls DESC"
  python3 - "$work/$label-samples.txt" "$accepted_at" "$completed_at" <<'PY'
import collections, sys
path, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
samples = []
for line in open(path):
    parts = line.split()
    if len(parts) == 5 and start <= float(parts[0]) <= end:
        samples.append((int(parts[1]), int(parts[2]), int(parts[3]), parts[4]))
busy = [s for s in samples if s[0] > 0]
waits = collections.Counter(e for s in busy if s[3] != "-" for e in s[3].split(","))
running = sum(s[0] for s in busy)
print(f"lock waits (pg_stat_activity and pg_locks every 0.1 s while sending): {len(samples)} samples, "
      f"{len(busy)} with a gateway statement running ({running} statements seen); "
      f"waiting for a lock in {sum(1 for s in samples if s[1] > 0)}, locks not granted in {sum(1 for s in samples if s[2] > 0)} "
      f"(at most {max((s[2] for s in samples), default=0)})")
top = ", ".join(f"{event} {100 * n / running:.0f}%" for event, n in waits.most_common(5)) if running else "-"
print(f"running statements waiting on (share of those seen): {top}")
PY
  echo "lock waits over 100 ms logged by the server: $(grep -c " $db .*still waiting for" "$pgdir/server.log" || true)," \
    "deadlocks: $(pg_sql postgres "SELECT deadlocks FROM pg_stat_database WHERE datname = '$db'")"
  grep -A1 " $db .*still waiting for" "$pgdir/server.log" | head -6 | cut -c1-240 || true
  # Measured: dropped, so that no vacuum or statistics work on it runs into the next scenario.
  pg_sql postgres "DROP DATABASE $db" >/dev/null
}

# The claim's cost against the campaign's size, on each store.
run_claims() {
  echo "-- a dispatcher turn's storage time at 100,000 and 10,000,000 devices (PushgateBench claim-time)"
  [ -n "$pgdir" ] || { pg_start; pg_sql postgres "CREATE EXTENSION pg_stat_statements" >/dev/null; }
  for n in 100000 10000000; do
    .build/release/PushgateBench claim-time "$n"
    pg_sql postgres "CREATE DATABASE claims_$n" >/dev/null
    .build/release/PushgateBench claim-time "$n" "$(pg_url "claims_$n")"
    pg_sql postgres "DROP DATABASE claims_$n" >/dev/null
  done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
for round in $(seq "$rounds"); do
  echo "== round $round of $rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  rates=(); cpu_us=(); pg_us=(); stored=(); written=(); journal=()
  for scenario in $scenarios; do
    case $scenario in
      send) run_send ;;
      bare) run_bare ;;
      sqlite) run_sqlite ;;
      pg1) run_postgres pg1 1 ;;
      pg2) run_postgres pg2 2 ;;
      pgsnap) run_postgres pgsnap 1 ;;
      claims) [ "$round" = 1 ] && run_claims ;;
      *) echo "unknown scenario $scenario (bare, send, sqlite, pg1, pg2, pgsnap, claims)" >&2; exit 2 ;;
    esac
  done
  for label in bare send sqlite pg1 pg2 pgsnap; do
    [ -n "${rates[$label]:-}" ] || continue
    all_rates[$label]+=" ${rates[$label]}"
    all_cpu[$label]+=" ${cpu_us[$label]}"
    [ -n "${pg_us[$label]:-}" ] && all_pg[$label]+=" ${pg_us[$label]}"
    [ -n "${stored[$label]:-}" ] && all_stored[$label]+=" ${stored[$label]}"
    [ -n "${written[$label]:-}" ] && all_written[$label]+=" ${written[$label]}"
    [ -n "${journal[$label]:-}" ] && all_journal[$label]+=" ${journal[$label]}"
    [ -n "${rates[send]:-}" ] && all_vs_send[$label]+=" $(ratio "${rates[$label]}" "${rates[send]}")"
    [ -n "${cpu_us[send]:-}" ] && all_cpu_vs_send[$label]+=" $(ratio "${cpu_us[$label]}" "${cpu_us[send]}")"
    [ -n "${rates[bare]:-}" ] && all_vs_bare[$label]+=" $(ratio "${rates[$label]}" "${rates[bare]}")"
  done
  [ -n "${rates[pgsnap]:-}" ] && [ -n "${rates[pg1]:-}" ] && all_snap[pgsnap]+=" $(ratio "${rates[pgsnap]}" "${rates[pg1]}")"
done
m() { median <<< "$1"; }
mi() { printf '%.0f' "$(m "$1")"; }    # a rate
m2() { printf '%.2f' "$(m "$1")"; }    # a ratio
m1() { printf '%.1f' "$(m "$1")"; }    # µs, bytes
echo "== summary, $devices devices, medians of $rounds rounds (each ratio: the median of the rounds' ratios); load average now $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${all_rates[bare]:-}" ] && echo "bare    $(mi "${all_rates[bare]}")/s at $(m1 "${all_cpu[bare]}") us CPU/request (rounds:${all_rates[bare]})"
for label in send sqlite pg1 pg2 pgsnap; do
  [ -n "${all_rates[$label]:-}" ] || continue
  line=$(printf '%-7s %7s/s (rounds:%s)' "$label" "$(mi "${all_rates[$label]}")" "${all_rates[$label]}")
  [ -n "${all_vs_bare[$label]:-}" ] && line+=", $(m2 "${all_vs_bare[$label]}") x bare libcurl ($(mi "${all_rates[bare]}")/s)"
  line+=", gateway CPU $(m1 "${all_cpu[$label]}") us/device"
  if [ "$label" != send ] && [ -n "${all_vs_send[$label]:-}" ]; then
    line+=" ($(m2 "${all_cpu_vs_send[$label]}") x send's $(m1 "${all_cpu[send]}")); $(m2 "${all_vs_send[$label]}") x send's rate (send: $(mi "${all_rates[send]}")/s; rounds:${all_vs_send[$label]})"
  fi
  [ -n "${all_pg[$label]:-}" ] && line+=", PostgreSQL CPU $(m1 "${all_pg[$label]}") us/device"
  [ -n "${all_stored[$label]:-}" ] && line+=", stored $(mi "${all_stored[$label]}") B/device, written $(mi "${all_written[$label]}") B/device"
  [ -n "${all_journal[$label]:-}" ] && line+=" (WAL $(mi "${all_journal[$label]}") B/device)"
  echo "$line"
done
[ -n "${all_snap[pgsnap]:-}" ] && echo "PostgreSQL with a snapshot held open / without: $(m2 "${all_snap[pgsnap]}") (rounds:${all_snap[pgsnap]})"
exit 0
