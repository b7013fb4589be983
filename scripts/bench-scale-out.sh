#!/usr/bin/env bash
# Scale-out of vault-server on this machine (issue 22), side by side with the embedded server:
# builds release; starts a PostgreSQL 15 cluster of its own (initdb in a temp folder, loopback,
# default durability: fsync on), a SeaweedFS S3 store of its own (`weed server`, the binary of
# scripts/install-deps.sh; CONTENT=folder shares one data folder instead), three instances on
# them behind haproxy round-robin, and one embedded server (SQLite + folder). Prints:
#  1. upload throughput with 1, 4 and 16 concurrent curl clients (SIZE_MB-MiB one-request
#     uploads) for both, and the ratio; beside them the same PUTs straight into the S3 store, and
#     the CPU seconds each side's processes spent per GiB (what bounds a 2-core machine);
#  2. `kill -9` of the instance receiving a chunk in the middle of a resumable upload of
#     KILL_MB MiB through the balancer: the bytes re-sent (the server's bytesReceivedTotal less
#     the file's size; target <= 1 chunk) and the file's SHA-256 read back;
#  3. the latency from sending a change through instance 1 to its event on a stream open on
#     instance 2 (CHANGES changes, p50/p99, while STREAMS streams are open there);
#  4. LOSS_CHANGES changes made through the balancer by 4 writers while an instance is killed
#     (-9) and started again every RESTART_S seconds, followed by one client through the
#     balancer (event stream with Last-Event-ID, then the feed from its cursor): changes lost and
#     repeated (target 0 and 0);
#  and each process's RSS. Everything on loopback, all temp data removed at exit.
#   SIZE_MB=16 KILL_MB=1024 CHANGES=200 STREAMS=1000 LOSS_CHANGES=100000 RESTART_S=3 \
#   CONTENT=s3 SCRATCH=.build-server scripts/bench-scale-out.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${SCRATCH:-$ROOT/.build-server}
SIZE_MB=${SIZE_MB:-16}
CHANGES=${CHANGES:-200}
STREAMS=${STREAMS:-1000}
KILL_MB=${KILL_MB:-1024}
LOSS_CHANGES=${LOSS_CHANGES:-100000}
RESTART_S=${RESTART_S:-3}
CONTENT=${CONTENT:-s3}
PG_BIN=/usr/lib/postgresql/15/bin
PY=/usr/bin/python3
WEED=${WEED_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/vault/venv-seaweedfs-4.48/bin/weed}
for tool in curl haproxy "$PG_BIN/initdb" "$PY"; do
  command -v "$tool" >/dev/null || { echo "$tool is required (scripts/install-deps.sh)" >&2; exit 1; }
done
if [ "$CONTENT" = s3 ] && ! [ -x "$WEED" ]; then echo "SeaweedFS ($WEED) is required for CONTENT=s3: scripts/install-deps.sh" >&2; exit 1; fi
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# shellcheck source=lib/release-server.sh
. "$ROOT/scripts/lib/release-server.sh"
PIDS=()
PG_PID=""
WEED_PID=""
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  # Instances restarted by the kill phases are not children of this shell: their pid files.
  for f in "$TMP"/vault*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  if [ -n "$WEED_PID" ]; then kill "$WEED_PID" 2>/dev/null || true; wait "$WEED_PID" 2>/dev/null || true; fi
  if [ -n "$PG_PID" ]; then kill "$PG_PID" 2>/dev/null || true; wait "$PG_PID" 2>/dev/null || true; fi
  cleanup
}
trap stop_all EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# PostgreSQL of our own (as the postgres user when run as root: it refuses to run as root).
AS=()
mkdir -p "$TMP/pg" && chmod 0700 "$TMP/pg"
printf 'bench-db-password\n' > "$TMP/pg/pw"
if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$TMP/pg"; chmod 0755 "$TMP"; AS=(runuser -u postgres --); fi
"${AS[@]}" "$PG_BIN/initdb" -D "$TMP/pg/data" -U vault --pwfile "$TMP/pg/pw" --auth=scram-sha-256 --locale=C -E UTF8 \
  --no-instructions >/dev/null
PG_PORT=$(free_port)
"${AS[@]}" "$PG_BIN/postgres" -D "$TMP/pg/data" -c listen_addresses=127.0.0.1 -p "$PG_PORT" -k "$TMP/pg" \
  -c max_connections=50 >"$TMP/pg.log" 2>&1 &
PG_PID=$!
for _ in $(seq 100); do "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break; sleep 0.1; done
URL="postgresql://vault:bench-db-password@127.0.0.1:$PG_PORT/postgres"

# SeaweedFS of our own: master, volume, filer and S3 gateway in one `weed server`, on loopback.
CONTENT_ARGS=()
if [ "$CONTENT" = s3 ]; then
  W=(); for _ in 1 2 3 4 5 6 7 8; do W+=("$(free_port)"); done
  mkdir -p "$TMP/weed/data"
  KEY="bench$RANDOM$RANDOM"; SECRET="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
  printf '{"identities":[{"name":"vault","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}' \
    "$KEY" "$SECRET" > "$TMP/weed/s3.json"
  printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$KEY" "$SECRET" > "$TMP/weed/credentials"
  (cd "$TMP/weed" && exec "$WEED" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$TMP/weed/data" \
    -master.port="${W[0]}" -master.port.grpc="${W[4]}" -master.volumeSizeLimitMB=1024 \
    -volume.port="${W[1]}" -volume.port.grpc="${W[5]}" -volume.max=0 \
    -filer -filer.port="${W[2]}" -filer.port.grpc="${W[6]}" \
    -s3 -s3.port="${W[3]}" -s3.port.grpc="${W[7]}" -s3.config="$TMP/weed/s3.json" \
    -s3.port.iceberg=0 -s3.port.lance=0 -iam=false -s3.iam=false) >"$TMP/weed.log" 2>&1 &
  WEED_PID=$!
  S3="s3://vault-bench?endpoint=http://127.0.0.1:${W[3]}&region=us-east-1&credentials=$TMP/weed/credentials"
  for _ in $(seq 600); do "$BIN" migrate --data "$TMP/shared" --metadata "$URL" --content "$S3" >/dev/null 2>&1 && break; sleep 0.2; done
  CONTENT_ARGS=(--content "$S3")
fi

MAX_BODY=$(( (SIZE_MB + 1) << 20 ))
start_server() {   # name, port (0: any), extra args…: starts it, waits for its port; sets LAST_PORT, LAST_PID
  local name=$1 port=$2; shift 2
  "$BIN" serve --listen "127.0.0.1:$port" --quiet --max-body "$MAX_BODY" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
  echo "$LAST_PID" > "$TMP/$name.pid"
  disown "$LAST_PID"   # the kill phases kill and restart instances: no job notices from this shell
  for _ in $(seq 100); do grep -q listening "$TMP/$name.out" 2>/dev/null && break; sleep 0.1; done
  LAST_PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/$name.out")
  [ -n "$LAST_PORT" ] || { echo "$name did not start:" >&2; cat "$TMP/$name.err" >&2; exit 1; }
}

"$BIN" migrate --data "$TMP/shared" --metadata "$URL" "${CONTENT_ARGS[@]}" >/dev/null
"$BIN" user add bench --data "$TMP/shared" --metadata "$URL" "${CONTENT_ARGS[@]}" --password-file "$TMP/pw" >/dev/null
"$BIN" user add bench --data "$TMP/embedded" --password-file "$TMP/pw" >/dev/null
head -c 32 /dev/urandom > "$TMP/jwt.secret"
PORTS=(); INSTANCE_PIDS=()
for i in 1 2 3; do
  # Fixed ports, so an instance killed by a phase below starts again where the balancer expects it.
  start_server "vault$i" "$(free_port)" --data "$TMP/shared" --metadata "$URL" "${CONTENT_ARGS[@]}" \
    --jwt-secret-file "$TMP/jwt.secret" --instance "vault$i" --trusted-proxy 127.0.0.1 --max-connections-per-ip 0 \
    --max-event-streams 100000 --max-connections 4000 --changes-keep 10000000
  PORTS+=("$LAST_PORT"); INSTANCE_PIDS+=("$LAST_PID")
done
start_server embedded 0 --data "$TMP/embedded"
EMBEDDED_PORT=$LAST_PORT; EMBEDDED_PID=$LAST_PID

LB_PORT=$(free_port)
cat > "$TMP/haproxy.cfg" <<EOF
global
    maxconn 4000
    stats socket $TMP/haproxy.sock mode 600 level admin
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout check 5s
    retries 3
    option redispatch
    option forwardfor
frontend vault
    bind 127.0.0.1:$LB_PORT
    default_backend instances
backend instances
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    server vault1 127.0.0.1:${PORTS[0]} check inter 300ms fall 1 rise 1
    server vault2 127.0.0.1:${PORTS[1]} check inter 300ms fall 1 rise 1
    server vault3 127.0.0.1:${PORTS[2]} check inter 300ms fall 1 rise 1
EOF
haproxy -db -f "$TMP/haproxy.cfg" >"$TMP/haproxy.log" 2>&1 &
HAPROXY_PID=$!
PIDS+=("$HAPROXY_PID")
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$LB_PORT/readyz" && break; sleep 0.1; done

token() { curl -sf -X POST "$1/v1/auth/token" -d '{"username":"bench","password":"bench-password"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'; }
head -c $(( SIZE_MB << 20 )) /dev/urandom > "$TMP/payload"
now() { date +%s.%N; }
timed_round() {   # clients, command…: that many runs of the command at once (each with a name of its own last) → seconds
  local n=$1 t0 t1 pids=(); shift
  t0=$(now)
  for i in $(seq "$n"); do "$@" "$RANDOM-$n-$i" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
api_upload() {   # base URL, token, name: one one-request upload of the payload
  curl -sf -o /dev/null -X POST -H "Authorization: Bearer $2" -H 'Content-Type: application/octet-stream' \
    --data-binary @"$TMP/payload" "$1/v1/upload?uploadType=media&name=$3"
}
s3_put() {   # name: the same payload PUT straight into the S3 store (what bounds the instances)
  curl -sf -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$KEY:$SECRET" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    --data-binary @"$TMP/payload" "http://127.0.0.1:${W[3]}/vault-bench/direct/$1"
}

ticks() {   # pids… → their CPU time so far (user + system), in clock ticks
  local t=0 p
  for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done
  echo "$t"
}
pg_pids() { local c; c=$(pgrep -P "$PG_PID" | tr '\n' ' '); echo "$PG_PID $c $(for p in $c; do pgrep -P "$p"; done | tr '\n' ' ')"; }
instance_pids() { cat "$TMP"/vault1.pid "$TMP"/vault2.pid "$TMP"/vault3.pid; }
HZ=$(getconf CLK_TCK)
cpu_per_gib() { awk -v t="$1" -v hz="$HZ" -v mib="$2" 'BEGIN { printf "%.2f", t / hz / (mib / 1024) }'; }

EMB="http://127.0.0.1:$EMBEDDED_PORT"; LB="http://127.0.0.1:$LB_PORT"
EMB_TOKEN=$(token "$EMB"); LB_TOKEN=$(token "$LB")
STORE="$([ "$CONTENT" = s3 ] && echo "SeaweedFS S3" || echo "one shared data folder")"
echo "payload ${SIZE_MB} MiB per client; $(nproc) cores; PostgreSQL 15 (fsync on) and $STORE on loopback; 3 instances behind haproxy"
echo "== 1. upload throughput"
printf '%-10s %16s %19s %8s %22s\n' "clients" "embedded MiB/s" "3 instances MiB/s" "ratio" "S3 store alone MiB/s"
CPU=()
for N in 1 4 16; do
  c0=$(ticks "$EMBEDDED_PID")
  e=$(timed_round "$N" api_upload "$EMB" "$EMB_TOKEN")
  c1=$(ticks "$EMBEDDED_PID"); i0=$(ticks $(instance_pids)); h0=$(ticks "$HAPROXY_PID"); p0=$(ticks $(pg_pids)); w0=$(ticks $WEED_PID)
  d=$(timed_round "$N" api_upload "$LB" "$LB_TOKEN")
  i1=$(ticks $(instance_pids)); h1=$(ticks "$HAPROXY_PID"); p1=$(ticks $(pg_pids)); w1=$(ticks $WEED_PID)
  if [ "$CONTENT" = s3 ]; then a=$(timed_round "$N" s3_put); else a=""; fi
  w2=$(ticks $WEED_PID)
  awk -v n="$N" -v s="$SIZE_MB" -v e="$e" -v d="$d" -v a="$a" \
    'BEGIN { printf "%-10s %16.1f %19.1f %7.2fx %22s\n", n, n * s / e, n * s / d, e / d, a == "" ? "-" : sprintf("%.1f", n * s / a) }'
  MIB=$(( N * SIZE_MB ))
  CPU+=("$(printf '%-10s %16s %19s   (instances %s + haproxy %s + PostgreSQL %s + S3 store %s) %12s' "$N" \
    "$(cpu_per_gib $((c1 - c0)) $MIB)" "$(cpu_per_gib $((i1 - i0 + h1 - h0 + p1 - p0 + w1 - w0)) $MIB)" \
    "$(cpu_per_gib $((i1 - i0)) $MIB)" "$(cpu_per_gib $((h1 - h0)) $MIB)" "$(cpu_per_gib $((p1 - p0)) $MIB)" \
    "$(cpu_per_gib $((w1 - w0)) $MIB)" "$([ -n "$a" ] && cpu_per_gib $((w2 - w1)) $MIB || echo -)")")
done
echo "CPU seconds per GiB uploaded (the servers' processes; the curl clients not counted; $(nproc) cores in all):"
printf '%-10s %16s %19s   %s\n' "clients" "embedded" "3 instances, all" "(its parts), then the S3 store alone"
printf '%s\n' "${CPU[@]}"

echo "== 2. kill -9 of the instance receiving a chunk, mid-upload of ${KILL_MB} MiB"
"$PY" "$ROOT/scripts/lib/scale_out.py" kill-upload "$TMP" "$LB_PORT" "$LB_TOKEN" "$KILL_MB"

echo "== 3. a change through instance 1, its event on instance 2"
# Cross-instance event latency: a stream on instance 2 (plus idle ones), changes through instance 1.
"$PY" - "${PORTS[0]}" "${PORTS[1]}" "$(token "http://127.0.0.1:${PORTS[0]}")" "$CHANGES" "$STREAMS" <<'EOF'
import http.client, json, socket, sys, threading, time
writer_port, reader_port, token, changes, streams = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
auth = {"Authorization": "Bearer " + token}
def open_stream():
    s = socket.create_connection(("127.0.0.1", reader_port))
    s.sendall(("GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % token).encode())
    return s
idle = [open_stream() for _ in range(max(0, streams - 1))]
live = open_stream()
live.settimeout(10)
buf = b""
def read_until(marker):
    global buf
    while marker not in buf:
        buf += live.recv(65536)
    i = buf.index(marker) + len(marker); out, buf = buf[:i], buf[i:]
    return out
read_until(b": connected")
w = http.client.HTTPConnection("127.0.0.1", writer_port)
lat = []
for i in range(changes):
    body = json.dumps({"name": "lat-%d-%f" % (i, time.time()), "parentId": "root", "type": "folder"})
    t0 = time.monotonic()   # from sending the change: the write, its commit, NOTIFY, the other instance's wake-up
    w.request("POST", "/v1/files", body, dict(auth, **{"Content-Type": "application/json"}))
    r = w.getresponse(); r.read()
    read_until(b"event: changed")
    lat.append(time.monotonic() - t0)
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
print("event on instance 2 after a change sent through instance 1 (%d changes, %d streams open): p50 %.1f ms, p99 %.1f ms, max %.1f ms"
      % (changes, streams, p(0.5), p(0.99), lat[-1] * 1000))
for s in idle: s.close()
EOF

echo "== 4. changes lost or repeated across instance restarts"
"$PY" "$ROOT/scripts/lib/scale_out.py" loss "$TMP" "$LB_PORT" "$LB_TOKEN" "$LOSS_CHANGES" "$RESTART_S"

echo "== RSS"
rss() { awk '/VmRSS/ { r = $2 } /VmHWM/ { h = $2 } END { printf "RSS %.1f MiB (peak %.1f MiB)", r / 1024, h / 1024 }' "/proc/$1/status"; }
for i in 1 2 3; do echo "instance vault$i (since its last start): $(rss "$(cat "$TMP/vault$i.pid")")"; done
echo "embedded server: $(rss "$EMBEDDED_PID")"
