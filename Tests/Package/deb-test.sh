#!/usr/bin/env bash
# The Debian package, installed for real (`make test`; root on Debian 12): built from the
# release binary, its Depends against what the binary links, the installed binary and
# configuration, the unit under systemd-analyze, the file modes and conffiles, an upgrade
# from the previous version with a campaign in its database, removal and purge. The
# machine is left as it was: the package purged and the system user it made deleted.
#
# Usage: Tests/Package/deb-test.sh [--binary PATH]
#   --binary  a release binary to package (default: scripts/release-build.sh --product
#             pushgate, which rebuilds only what changed since the last release build)
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "deb-test: FAIL: $*" >&2; exit 1; }
step() { echo "deb-test: $*"; }

[ "$(id -u)" = 0 ] || fail "installs a package: run as root (CI does)"
if dpkg-query -W -f='${Status}' pushgate 2>/dev/null | grep -qv "not-installed"; then
  fail "a pushgate package is already on this machine ($(dpkg-query -W -f='${Version} ${Status}' pushgate)); this test would replace it"
fi
user_existed=no
getent passwd pushgate >/dev/null && user_existed=yes

work=$(mktemp -d)
serve_pid=
cleanup() {
  set +e   # every step, whatever failed before
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; fi
  dpkg --purge pushgate >/dev/null 2>&1 || true
  if [ "$user_existed" = no ] && getent passwd pushgate >/dev/null; then
    userdel pushgate >/dev/null 2>&1 || true
    getent group pushgate >/dev/null && groupdel pushgate >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

binary=
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    *) fail "unknown argument $1" ;;
  esac
done
if [ -z "$binary" ]; then
  SWIFT=${SWIFT:-swift} bash scripts/release-build.sh --product pushgate >/dev/null
  binary=.build/release/pushgate
fi

version=$(sed -n 's/^ *public static let current = "\([^"]*\)".*/\1/p' Sources/Gateway/PushgateVersion.swift)
previous="${version}~test1"   # sorts before $version
deb=$(bash scripts/build-deb.sh --binary "$binary" --output "$work")
old=$(bash scripts/build-deb.sh --binary "$binary" --version "$previous" --output "$work")
[ "$(basename "$deb")" = "pushgate_${version}_$(dpkg --print-architecture).deb" ] || fail "package named $(basename "$deb")"
dpkg --compare-versions "$previous" lt "$version" || fail "$previous does not sort before $version"

step "Depends against the libraries the binary links"
# The package of each library the binary needs (NEEDED, found by ldd, owned per dpkg -S).
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
[ -n "$needed" ] || fail "readelf found no NEEDED entries in $binary"
linked=""
for soname in $needed; do
  # "libx.so.1 => /path (0x…)", or the loader's own "/lib64/ld-linux-x86-64.so.2 (0x…)".
  path=$(ldd "$binary" | awk -v so="$soname" '$1 == so && $2 == "=>" { print $3 } $2 != "=>" && $1 ~ ("/" so "$") { print $1 }')
  [ -n "$path" ] || fail "ldd cannot resolve $soname"
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null) \
    || fail "no Debian package owns $path ($soname): the binary links something outside Debian"
  linked="$linked ${owner%%:*}"
done
linked=$(echo $linked | tr ' ' '\n' | sort -u)
depends=$(dpkg-deb -f "$deb" Depends)
declared=$(echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//; s/:any$//' | grep -v '^adduser$' | sort -u)
[ "$linked" = "$declared" ] || fail "Depends declares [$(echo $declared)] but the binary links libraries of [$(echo $linked)] (Depends: $depends)"
for lib in libcurl4 libssl3 libmicrohttpd12 libsqlite3-0 libpq5; do
  echo "$declared" | grep -qx "$lib" || fail "Depends lacks $lib: $depends"
done
echo "$depends" | grep -q "swift\|Foundation" && fail "Depends names the Swift runtime: $depends"

step "install $previous"
dpkg -i "$old" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $old"; }
[ "$(/usr/bin/pushgate --version | head -1)" = "pushgate $version" ] || fail "pushgate --version: $(/usr/bin/pushgate --version 2>&1 | head -1)"

mode() { stat -c '%a %U:%G' "$1"; }
expect_mode() { [ "$(mode "$1")" = "$2" ] || fail "$1 is $(mode "$1"), expected $2"; }
expect_mode /usr/bin/pushgate "755 root:root"
expect_mode /etc/pushgate "755 root:root"
expect_mode /etc/pushgate/gateway.json "644 root:root"
expect_mode /etc/pushgate/routes.json "644 root:root"
expect_mode /etc/pushgate/templates/order_ready.json "644 root:root"
expect_mode /etc/default/pushgate "644 root:root"
expect_mode /lib/systemd/system/pushgate.service "644 root:root"
expect_mode /var/lib/pushgate "700 pushgate:pushgate"
getent passwd pushgate | grep -q ':/usr/sbin/nologin$' || fail "the pushgate user can log in: $(getent passwd pushgate)"

conffiles=$(dpkg-query -W -f='${Conffiles}\n' pushgate | awk 'NF { print $1 }' | sort)
expected_conffiles=$(printf '%s\n' /etc/default/pushgate /etc/pushgate/gateway.json /etc/pushgate/routes.json \
  $(cd Templates && ls *.json | sed 's|^|/etc/pushgate/templates/|') | sort)
[ "$conffiles" = "$expected_conffiles" ] || fail "conffiles are [$(echo $conffiles)], expected [$(echo $expected_conffiles)]"

step "the installed configuration, checked as the service's user"
check=$(cd / && runuser -u pushgate -- /usr/bin/pushgate config check --config /etc/pushgate/gateway.json 2>&1) \
  || fail "pushgate config check: $check"
[ "$check" = "/etc/pushgate/gateway.json: ok (4 routes, APNs dry run, listen 127.0.0.1:8080)" ] || fail "config check said: $check"

step "systemd-analyze verify and security"
# verify loads the unit offline; only its own lines matter (other units may warn).
verify=$(systemd-analyze verify /lib/systemd/system/pushgate.service 2>&1) || fail "systemd-analyze verify: $verify"
echo "$verify" | grep -i "pushgate" && fail "systemd-analyze verify complained about the unit: $verify"
security=$(systemd-analyze security --offline=true --no-pager /lib/systemd/system/pushgate.service 2>&1) \
  || fail "systemd-analyze security: $security"
score=$(echo "$security" | sed -n 's/.*Overall exposure level for pushgate.service: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "no exposure level in: $security"
step "exposure level $score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "exposure $score above 2.0: $(echo "$security" | grep '✗')"

# The installed service's job, as the service's user: a scheduled campaign in its database.
starts=0
start_serve() {
  # A log of its own each time: the previous one still names the previous port.
  starts=$((starts + 1))
  log="$work/serve-$starts.log"
  # setpriv execs pushgate itself (runuser would stay between, and answer SIGTERM with 143).
  (cd / && exec setpriv --reuid=pushgate --regid=pushgate --init-groups \
     /usr/bin/pushgate serve --config /etc/pushgate/gateway.json --listen 127.0.0.1:0) 2>"$log" &
  serve_pid=$!
  port=
  for _ in $(seq 1 600); do
    port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)[^0-9].*/\1/p' "$log" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$serve_pid" 2>/dev/null || fail "pushgate serve exited: $(cat "$log")"
    sleep 0.1
  done
  [ -n "$port" ] || fail "pushgate serve did not listen within 60 s: $(cat "$log")"
}
stop_serve() {
  kill -TERM "$serve_pid"
  wait "$serve_pid" || fail "pushgate serve exited $? at SIGTERM: $(cat "$log")"
  serve_pid=
}
step "a campaign in the $previous database"
start_serve
token=$(printf '%064x' 42)
later=$(date -u -d '+300 days' +%Y-%m-%dT%H:%M:%SZ)   # scheduled: still queued after the upgrade
answer=$(curl -sS -X POST "http://127.0.0.1:$port/v1/campaigns" -H 'Content-Type: application/json' \
  -d "{\"alert\": {\"body\": \"after the upgrade\"}, \"send_at\": \"$later\", \"devices\": [\"$token\"]}") \
  || fail "POST /v1/campaigns to port $port: $(cat "$log")"
campaign=$(echo "$answer" | sed -n 's/.*"id": *"\([0-9a-f-]*\)".*/\1/p')
[ -n "$campaign" ] || fail "POST /v1/campaigns answered: $answer"
stop_serve
# Owned by the service's user (its mode is the unit's UMask=0077 under systemd, not here).
[ "$(stat -c %U:%G /var/lib/pushgate/pushgate.db)" = pushgate:pushgate ] || fail "the database is $(stat -c %U:%G /var/lib/pushgate/pushgate.db)"
[ -L /etc/systemd/system/multi-user.target.wants/pushgate.service ] || fail "the unit was not enabled"

step "the operator's edits to conffiles"
sed -i 's/"shutdownDeadlineSeconds": 10/"shutdownDeadlineSeconds": 12/' /etc/pushgate/gateway.json
grep -q '"shutdownDeadlineSeconds": 12' /etc/pushgate/gateway.json || fail "could not edit gateway.json"
echo "PUSHGATE_APNS_CONNECTIONS=3" >> /etc/default/pushgate

step "upgrade to $version"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $deb over $previous"; }
[ "$(dpkg-query -W -f='${Version}' pushgate)" = "$version" ] || fail "installed version $(dpkg-query -W -f='${Version}' pushgate)"
grep -q '"shutdownDeadlineSeconds": 12' /etc/pushgate/gateway.json || fail "the upgrade overwrote the edited gateway.json"
grep -q '^PUSHGATE_APNS_CONNECTIONS=3$' /etc/default/pushgate || fail "the upgrade overwrote the edited /etc/default/pushgate"
[ ! -e /etc/pushgate/gateway.json.dpkg-new ] && [ ! -e /etc/pushgate/gateway.json.dpkg-dist ] || fail "dpkg left a new gateway.json beside the edited one"
expect_mode /var/lib/pushgate "700 pushgate:pushgate"
listed=$(cd / && runuser -u pushgate -- /usr/bin/pushgate campaigns --json --config /etc/pushgate/gateway.json) || fail "pushgate campaigns: $listed"
echo "$listed" | grep -q "$campaign" || fail "campaign $campaign lost in the upgrade: $listed"
start_serve
status=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/campaigns/$campaign") \
  || fail "GET /v1/campaigns/$campaign from port $port: $(cat "$log")"
[ "$status" = 200 ] || fail "GET /v1/campaigns/$campaign after the upgrade: $status"
stop_serve

step "remove keeps the configuration and the database"
dpkg -r pushgate >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -r"; }
[ ! -e /usr/bin/pushgate ] || fail "dpkg -r left /usr/bin/pushgate"
[ ! -e /lib/systemd/system/pushgate.service ] || fail "dpkg -r left the unit"
[ -f /var/lib/pushgate/pushgate.db ] || fail "dpkg -r deleted the database"
grep -q '"shutdownDeadlineSeconds": 12' /etc/pushgate/gateway.json || fail "dpkg -r deleted or reset gateway.json"
dpkg-query -W -f='${Status}' pushgate | grep -q "config-files" || fail "after dpkg -r: $(dpkg-query -W -f='${Status}' pushgate)"

step "purge deletes them"
dpkg -P pushgate >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -P"; }
for gone in /etc/pushgate /etc/default/pushgate /var/lib/pushgate /etc/systemd/system/pushgate.service \
            /etc/systemd/system/multi-user.target.wants/pushgate.service; do
  [ ! -e "$gone" ] && [ ! -L "$gone" ] || fail "dpkg -P left $gone"
done
if dpkg-query -W -f='${Status}' pushgate 2>/dev/null | grep -qv "not-installed"; then
  fail "after dpkg -P: $(dpkg-query -W -f='${Status}' pushgate)"
fi
step "ok"
