# Shared by the durable benchmarks (sourced): a work folder removed at exit, the h2o sink
# of Benchmarks/sink/h2o.conf with a throwaway CA on a free port, the token list and
# campaign bodies for $devices devices, and a gateway configuration sending to the sink.
# Sets: work, pids (killed at exit), port, root.
work=$(mktemp -d /tmp/pushgate-durable-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# The median of the numbers on standard input (separated by spaces or lines).
median() { tr -s ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR) printf "%g\n", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# The sink, with a throwaway CA.
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
echo "subjectAltName=IP:127.0.0.1" > "$work/ext.cnf"
openssl req -x509 "${ec[@]}" -keyout "$work/ca.key" -out "$work/ca.pem" -days 1 -subj "/CN=bench CA" 2>/dev/null
openssl req "${ec[@]}" -keyout "$work/server.key" -out "$work/server.csr" -subj "/CN=localhost" 2>/dev/null
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -out "$work/server.pem" -days 1 -extfile "$work/ext.cnf" 2>/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -e "s|@PORT@|$port|" -e "s|@CERT@|$work/server.pem|" -e "s|@KEY@|$work/server.key|" -e "s|@LOG@|$work/h2o.log|" -e "s|@FAIL_EVERY@|${fail_every:-100}|g" \
  Benchmarks/sink/h2o.conf > "$work/h2o.conf"
h2o -c "$work/h2o.conf" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done

# The devices, as a token list for send and as a campaign body for serve.
python3 - "$devices" "$work" <<'PY'
import sys
n, work = int(sys.argv[1]), sys.argv[2]
tokens = ["%064x" % (0xabc << 200 | i) for i in range(n)]
with open(work + "/tokens.txt", "w") as f:
    f.write("\n".join(tokens) + "\n")
# A campaign this big must confirm its device count (guard.confirmAbove).
head = '{"alert":{"title":"Price drop","body":"The jacket you saved is 20%% off today"},"deeplink":"https://example.com/product/42","confirm_devices":%d' % n
with open(work + "/campaign.json", "w") as f:
    f.write(head + "}\n")
with open(work + "/campaign.ndjson", "w") as f:
    f.write(head + "}\n" + "\n".join(tokens) + "\n")
PY
root=$(pwd)
cat > "$work/gateway.json" <<JSON
{"topic": "com.example.shop", "routes": "$root/config/routes.json", "templates": "$root/Templates",
 "apns": {"url": "https://127.0.0.1:$port", "caFile": "$work/ca.pem", "teamId": "TEAM123456", "keyId": "KEY1234567",
          "keyFile": "$root/Tests/APNsTests/Fixtures/test-key.p8", "connections": 2},
 "server": {"listen": "127.0.0.1:0", "requestLog": "off", "maxBodyBytes": 268435456, "connectionTimeoutSeconds": 600},
 "storage": {"path": "$work/pushgate.db", "synchronous": "full"}}
JSON

