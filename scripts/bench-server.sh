#!/usr/bin/env bash
# Upload throughput of vault-server on loopback: builds release, starts a server on a temp data
# folder, uploads SIZE_MB-MiB files with 1, 4 and 16 concurrent curl clients (one-request
# uploads, then resumable chunked uploads for 1 client), prints aggregate MiB/s and the server's
# peak RSS (VmHWM). Bounded: at most 16 × SIZE_MB MiB per round, loopback only, all temp data removed.
#   SIZE_MB=32 CHUNK_MB=8 SCRATCH=.build-server scripts/bench-server.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${SCRATCH:-$ROOT/.build-server}
SIZE_MB=${SIZE_MB:-32}
CHUNK_MB=${CHUNK_MB:-8}
command -v curl >/dev/null || { echo "curl is required" >&2; exit 1; }

# shellcheck source=lib/release-server.sh
. "$ROOT/scripts/lib/release-server.sh"
"$BIN" user add bench --data "$TMP/data" --password-file "$TMP/pw" >/dev/null
# shellcheck disable=SC2086
"$BIN" serve --data "$TMP/data" --listen 127.0.0.1:0 --quiet --max-body $(( (SIZE_MB + 1) << 20 )) \
  --max-chunk $(( CHUNK_MB << 20 )) ${SERVER_ARGS:-} >"$TMP/out" 2>"$TMP/err" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q listening "$TMP/out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/out")
[ -n "$PORT" ] || { echo "server did not start" >&2; cat "$TMP/err" >&2; exit 1; }
BASE="http://127.0.0.1:$PORT"
TOKEN=$(curl -sf -X POST "$BASE/v1/auth/token" -d '{"username":"bench","password":"bench-password"}' \
  | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
AUTH="Authorization: Bearer $TOKEN"

head -c $(( SIZE_MB << 20 )) /dev/urandom > "$TMP/payload"
SHA=$(sha256sum "$TMP/payload" | cut -c1-64)
now() { date +%s.%N; }

echo "payload: ${SIZE_MB} MiB per client; chunk size ${CHUNK_MB} MiB; server pid $SERVER_PID"
printf '%-34s %10s %12s\n' "mode" "seconds" "MiB/s"
for N in 1 4 16; do
  t0=$(now)
  pids=()
  for i in $(seq "$N"); do
    curl -sf -o /dev/null -X POST -H "$AUTH" -H 'Content-Type: application/octet-stream' \
      --data-binary @"$TMP/payload" "$BASE/v1/upload?uploadType=media&name=simple-$N-$i" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(now)
  awk -v n="$N" -v s="$SIZE_MB" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "%-34s %10.2f %12.1f\n", "simple upload, " n " client(s)", b - a, n * s / (b - a) }'
done

# One resumable upload, chunk by chunk (what the vault client does).
SESSION=$(curl -sf -X POST -H "$AUTH" "$BASE/v1/upload?uploadType=resumable" \
  -d "{\"name\":\"resumable\",\"size\":$(( SIZE_MB << 20 )),\"sha256\":\"$SHA\",\"requestId\":\"bench-1\"}")
UPLOAD_ID=$(echo "$SESSION" | sed -n 's/.*"uploadId":"\([^"]*\)".*/\1/p')
CHUNK=$(( CHUNK_MB << 20 )); TOTAL=$(( SIZE_MB << 20 ))
t0=$(now)
off=0
while [ "$off" -lt "$TOTAL" ]; do
  end=$(( off + CHUNK < TOTAL ? off + CHUNK : TOTAL ))
  dd if="$TMP/payload" bs=1M skip=$(( off >> 20 )) count="$CHUNK_MB" status=none \
    | curl -sf -o /dev/null -X PUT -H "$AUTH" -H "Content-Range: bytes $off-$(( end - 1 ))/$TOTAL" \
        -H 'Content-Type: application/octet-stream' --data-binary @- "$BASE/v1/upload/$UPLOAD_ID/chunk"
  off=$end
done
t1=$(now)
awk -v s="$SIZE_MB" -v a="$t0" -v b="$t1" \
  'BEGIN { printf "%-34s %10.2f %12.1f\n", "resumable upload, 1 client", b - a, s / (b - a) }'

echo "server peak RSS: $(awk '/VmHWM/ { print $2 / 1024 " MiB" }' "/proc/$SERVER_PID/status")"
