# A throwaway PostgreSQL cluster for the durable benchmark (sourced): initdb in a folder
# of its own under /tmp, a server on a free 127.0.0.1 port, run as the postgres user (the
# server refuses to run as root), stopped and removed by `pg_remove` (call it from the
# EXIT trap). Unlike the test cluster it keeps fsync and synchronous_commit on, as in
# production, so its commits cost what SQLite's synchronous=FULL ones do. pg_stat_statements
# is loaded (claim statement times) and lock waits over 100 ms are logged.
# Sets: pgdir, pgport, pgbin. Functions: pg_start, pg_remove, pg_sql DB SQL, pg_url DB,
# pg_cpu (the server's CPU seconds so far).
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "PostgreSQL server binaries not found under /usr/lib/postgresql (make deps installs postgresql-15)" >&2; exit 1; }
as_postgres=()
[ "$(id -u)" = 0 ] && as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups --)
pgdir=""

pg_start() {
  pgdir=$(mktemp -d /tmp/pushgate-pg-bench.XXXXXX)
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$pgdir"
  pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "${as_postgres[@]}" "$pgbin/initdb" -D "$pgdir/data" -A trust -U postgres -E UTF8 --locale=C > "$pgdir/initdb.log" 2>&1
  # One line: pg_ctl hands the options to a shell.
  local options=(-p "$pgport" -c listen_addresses=127.0.0.1 -c unix_socket_directories="$pgdir" -c max_connections=50
                 -c shared_buffers=256MB -c max_wal_size=4GB -c shared_preload_libraries=pg_stat_statements
                 -c log_lock_waits=on -c deadlock_timeout=100ms -c "log_line_prefix='%m [%p] %d '")
  "${as_postgres[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w -t 60 start -o "${options[*]}" > /dev/null
}

pg_remove() {
  [ -n "$pgdir" ] || return 0
  "${as_postgres[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -m immediate -w stop > /dev/null 2>&1 || true
  rm -rf "$pgdir"
  pgdir=""
}

pg_url() { echo "postgresql://postgres@127.0.0.1:$pgport/$1"; }

pg_sql() { psql -X -q -A -t -F ' ' -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pgport" -U postgres -d "$1" -c "$2"; }

# The server's CPU seconds so far, user + system: the postmaster's own and its reaped
# children's (backends that exited), plus its children alive now (checkpointer, WAL
# writer, the backends still connected). A difference of two readings is what the server
# spent in between.
pg_cpu() {
  local master
  master=$(head -1 "$pgdir/data/postmaster.pid")
  # Read through cat: a process that exits between the glob and the read is skipped
  # (awk would stop at the missing file and the benchmark with it).
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } \
    | awk -v m="$master" '$1 == m {s += $14 + $15 + $16 + $17} $4 == m {s += $14 + $15} END {printf "%.1f", s / 100}'
}
