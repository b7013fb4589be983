#!/usr/bin/env bash
# Memory of idle event streams in vault-server, side by side for its threading modes: builds
# release, then for each mode starts a server on a temp data folder, opens STREAMS idle
# `GET /v1/events` streams of one user from 127.0.0.1 (limits raised to allow it), and prints the
# server's RSS before and after, the cost per stream and its thread count. The last row is the
# configuration before issue 9 (a thread per connection, 256 KiB of buffers per connection).
# Bounded: loopback only, STREAMS sockets at a time, all temp data removed.
#   STREAMS=1000 SCRATCH=.build-server scripts/bench-server-streams.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${SCRATCH:-$ROOT/.build-server}
STREAMS=${STREAMS:-1000}
command -v curl >/dev/null || { echo "curl is required" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 1; }
[ "$(ulimit -n)" -gt $(( STREAMS + 64 )) ] || ulimit -n $(( STREAMS + 256 ))

# shellcheck source=lib/release-server.sh
. "$ROOT/scripts/lib/release-server.sh"

# Opens $STREAMS streams, waits until each has started, prints "rss_before rss_after threads ok".
measure() {
  PORT=$1 TOKEN=$2 PID=$3 N=$STREAMS python3 - <<'EOF'
import os, re, socket, time
port, token, pid, n = int(os.environ["PORT"]), os.environ["TOKEN"], os.environ["PID"], int(os.environ["N"])
def status(key):
    return int(re.search(key + r":\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
time.sleep(0.5)
before = status("VmRSS")
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    socks.append(s)
ok = 0
for s in socks:
    s.settimeout(20)
    got = b""
    try:
        while b": connected" not in got:
            chunk = s.recv(4096)
            if not chunk: break
            got += chunk
    except OSError:
        pass
    ok += b": connected" in got
time.sleep(1)
print(before, status("VmRSS"), status("Threads"), ok)
for s in socks: s.close()
EOF
}

printf '%-52s %8s %8s %10s %8s %8s\n' "mode ($STREAMS idle streams)" "RSS0 MiB" "RSS MiB" "KiB/stream" "threads" "streams"
run() {
  local label=$1; shift
  rm -rf "$TMP/data"
  "$BIN" user add bench --data "$TMP/data" --password-file "$TMP/pw" >/dev/null
  "$BIN" serve --data "$TMP/data" --listen 127.0.0.1:0 --quiet --max-event-streams "$STREAMS" \
    --max-connections $(( STREAMS + 64 )) --max-connections-per-ip 0 --keepalive 600 "$@" >"$TMP/out" 2>"$TMP/err" &
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q listening "$TMP/out" 2>/dev/null && break; sleep 0.1; done
  local port; port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/out")
  [ -n "$port" ] || { echo "server did not start" >&2; cat "$TMP/err" >&2; exit 1; }
  local token; token=$(curl -sf -X POST "http://127.0.0.1:$port/v1/auth/token" \
    -d '{"username":"bench","password":"bench-password"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  read -r before after threads ok < <(measure "$port" "$token" "$SERVER_PID")
  awk -v l="$label" -v b="$before" -v a="$after" -v t="$threads" -v ok="$ok" \
    'BEGIN { printf "%-52s %8.1f %8.1f %10.1f %8d %8d\n", l, b / 1024, a / 1024, (a - b) / (ok > 0 ? ok : 1), t, ok }'
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
}
run "pool: 4 threads, suspended streams (default)"
run "thread per connection (--threads 0)" --threads 0
run "thread per connection, 256 KiB buffers (before)" --threads 0 --connection-memory 262144
