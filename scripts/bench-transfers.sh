#!/usr/bin/env bash
# Benchmarks of resumable transfers (issue 4, "Targets"), each side by side with its reference in one run,
# against a real vault-server on loopback:
#  1. `vault sync` uploading a SIZE file  vs  `curl -T` of the same file to the same server's simple upload
#  2. `vault sync` downloading it (pinned, after `vault evict`)  vs  `curl` fetching the same file's content
#     Phases 1-2 run RUNS times on a fresh server each; the contenders alternate which goes first, and
#     every dirty page is written back (`sync`) before each one starts, so neither pays for the
#     other's writeback; the medians are reported.
#  3. peak RSS (GNU time) of `vault sync` and `vault cat` for a BIG file
#  4. bytes re-sent per interruption, counted by the server (`bytesReceivedTotal`), over 10 connection
#     drops injected by the server (`--test-faults`) and over 10 `kill -9` of `vault sync`; a phase
#     that could not interrupt anything (the upload finished first) says it measured nothing
# Usage: scripts/bench-transfers.sh [SIZE_MIB=2048] [BIG_GIB=10] [RUNS=3]
#   INTR_MIB=2048 (file for the interruption runs)  CHUNK_MIB=8 (server chunk size)  DELAY_MS=1000 (pacing, drops only)
#   BENCH_DIR=… (disk for the temp folder; default /tmp)  SYNC_ARGS="--concurrency N" (default: vault's own)
# Loopback only; every phase has a time bound; the temp folder and the servers are removed on exit.
# Reports figures and ratios against their targets; never fails on a missed target (exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
for p in time; do dpkg -s "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; done
SIZE_MIB=${1:-2048}
BIG_GIB=${2:-10}
RUNS=${3:-3}
INTR_MIB=${INTR_MIB:-2048}
CHUNK_MIB=${CHUNK_MIB:-8}
INTERRUPTIONS=10
[[ "$SIZE_MIB" =~ ^[1-9][0-9]*$ && "$BIG_GIB" =~ ^[1-9][0-9]*$ && "$INTR_MIB" =~ ^[1-9][0-9]*$ && "$RUNS" =~ ^[1-9][0-9]*$ ]] \
  || { echo "usage: $0 [SIZE_MIB] [BIG_GIB] [RUNS]  (positive integers)" >&2; exit 2; }
SIZE=$(( SIZE_MIB << 20 )); BIG=$(( BIG_GIB << 30 )); INTR=$(( INTR_MIB << 20 )); CHUNK=$(( CHUNK_MIB << 20 ))

# Disk: phases run one after another and each removes its data before the next. The worst phase
# holds the source, the vault's staging blob, the server's copy (+ curl's copy and its temp body
# for phase 1) and the download cache blob.
BASE_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}
NEED=$(python3 -c "print(max(6*$SIZE, 4*$BIG, 3*$INTR) + (1 << 30))")
AVAIL=$(( $(df -Pk "$BASE_DIR" | awk 'NR==2 {print $4}') * 1024 ))
if [ "$AVAIL" -lt "$NEED" ]; then
  printf 'error: not enough free disk in %s: %.1f GiB available, %.1f GiB needed (6 x %s MiB, or 4 x %s GiB for the RSS phase, + 1 GiB).\n' \
    "$BASE_DIR" "$(python3 -c "print($AVAIL/2**30)")" "$(python3 -c "print($NEED/2**30)")" "$SIZE_MIB" "$BIG_GIB" >&2
  echo "       Pass smaller sizes (e.g. $0 512 2) or BENCH_DIR=/a/bigger/disk." >&2
  exit 1
fi

swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
swift build -c release --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
BIN=$(swift build -c release --show-bin-path)

OUT=$(mktemp -d "$BASE_DIR/bench-transfers.XXXXXX")
SERVER_PID=""; BG_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"; for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
cleanup() {
  if [ -n "$BG_PID" ] && kill -0 "$BG_PID" 2>/dev/null; then kill -9 "$BG_PID" 2>/dev/null || true; wait "$BG_PID" 2>/dev/null || true; fi
  stop_server
  rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf 'bench password\n' > "$OUT/pw"          # the vault's password
printf 'bench-server-password\n' > "$OUT/spw"  # the server user's password
export VAULT_NO_KEYRING=1 VAULT_METERED=0 VAULT_BACKGROUND_DOWNLOADS=0   # the script times every download itself

# start_server NAME [--quiet]: a fresh server on its own data folder, users "bench" (curl's) and
# "vault" (the vault's: an end-to-end vault refuses an account that holds files it did not seal,
# such as curl's upload); sets BASE, TOKEN, AUTH (bench) and VAULT_AUTH (vault).
start_server() {
  local name=$1; shift
  "$BIN/vault-server" user add bench --data "$OUT/$name-data" --password-file "$OUT/spw" >/dev/null
  "$BIN/vault-server" user add vault --data "$OUT/$name-data" --password-file "$OUT/spw" >/dev/null
  "$BIN/vault-server" serve --data "$OUT/$name-data" --listen 127.0.0.1:0 --test-faults \
    --max-body $(( SIZE + (1 << 20) )) --max-chunk "$CHUNK" "$@" >"$OUT/$name.out" 2>"$OUT/$name.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q listening "$OUT/$name.out" 2>/dev/null && break; sleep 0.1; done
  local port; port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/$name.out")
  [ -n "$port" ] || { echo "server did not start" >&2; cat "$OUT/$name.log" >&2; exit 1; }
  BASE="http://127.0.0.1:$port"
  TOKEN=$(curl -sf -X POST "$BASE/v1/auth/token" -d '{"username":"bench","password":"bench-server-password"}' \
    | python3 -c "import json,sys; print(json.load(sys.stdin)['token'])")
  AUTH="Authorization: Bearer $TOKEN"
  VAULT_AUTH="Authorization: Bearer $(curl -sf -X POST "$BASE/v1/auth/token" -d '{"username":"vault","password":"bench-server-password"}' \
    | python3 -c "import json,sys; print(json.load(sys.stdin)['token'])")"
}
# new_vault NAME: a fresh vault logged in to the current server.
new_vault() {
  export VAULT_HOME="$OUT/$1-vault"
  v init --kdf-ops 1 --kdf-mem 8M >/dev/null
  v login --server "$BASE" --user vault --server-password-file "$OUT/spw" >/dev/null
}
v() { "$BIN/vault" "$@" --password-file "$OUT/pw" 2> >(grep -v 'no Secret Service' >&2); }
gen() { openssl enc -aes-128-ctr -pass pass:"$2" -nosalt -pbkdf2 < <(head -c "$3" /dev/zero) > "$1" 2>/dev/null; }
faults() { curl -sf -o /dev/null -X POST "$BASE/v1/test/faults" -H "$AUTH" -d "$1"; }
# timed LABEL LIMIT_S CMD…: runs CMD (stdout to /dev/null, stderr to OUT/LABEL.err) under GNU time
# and `timeout`; sets SECS, RC and RSS_KB. Never fails.
timed() {
  local label=$1 limit=$2; shift 2
  local s e; s=$(date +%s.%N)
  set +e
  /usr/bin/time -f %M -o "$OUT/$label.rss" timeout -k 10 "$limit" "$@" >/dev/null 2>"$OUT/$label.err"
  RC=$?
  set -e
  e=$(date +%s.%N)
  SECS=$(python3 -c "print(f'{$e-$s:.3f}')")
  RSS_KB=$(tail -n 1 "$OUT/$label.rss" 2>/dev/null | grep -E '^[0-9]+$' || echo 0)
  if [ "$RC" -ne 0 ]; then
    echo "  !! $label exited $RC after ${SECS} s$([ "$RC" -eq 124 ] && echo " (time limit ${limit} s)"): $(tail -n 3 "$OUT/$label.err" | tr '\n' ' ')"
  fi
}
limit_for() { echo $(( 120 + $1 / (10 << 20) )); }   # seconds: 2 min + 10 MiB/s at worst
mibs() { python3 -c "print(f'{$1/1048576/$2:.1f}')"; }
ok_mibs() { if [ "$RC" -eq 0 ]; then mibs "$1" "$2"; else echo n/a; fi; }   # a failed run is no figure
pct() { python3 -c "import sys; a, b = sys.argv[1:]; print('n/a' if 'n/a' in (a, b) else f'{float(a)/float(b)*100:.1f} %')" "$1" "$2"; }
mib() { python3 -c "print(f'{$1/1024:.1f} MiB')"; }
# median VALUE…: the median of the numeric values (n/a when there are none).
median() { python3 -c "import statistics, sys; v = [float(x) for x in sys.argv[1:] if x not in ('', 'n/a')]; print(f'{statistics.median(v):.1f}' if v else 'n/a')" "$@"; }
# flush: writes back every dirty page (e.g. the server's copy of the last upload) before the next
# contender starts, so that no contender's time includes another's writeback.
flush() { sync; }
# vault_file_id: the id of the vault's file among the live files of the server's root folder (the
# one end-to-end file: its name is a sealed token, its node record is set; curl's has neither).
vault_file_id() {
  curl -sf -H "$VAULT_AUTH" "$BASE/v1/files?parentId=root&pageSize=1000" \
    | python3 -c "import json,sys; print(next(f['id'] for f in json.load(sys.stdin)['files'] if f.get('meta')), end='')" 2>/dev/null || true
}
declare -A R   # results for the summary

echo "== 1-2. upload and download of a ${SIZE_MIB} MiB file on loopback (server chunk ${CHUNK_MIB} MiB), median of ${RUNS} run(s), contenders alternating"
gen "$OUT/up.bin" up "$SIZE"
LIM=$(limit_for "$SIZE")
declare -a CURL_UP=() VAULT_UP=() CURL_DOWN=() VAULT_DOWN=() CURL_NULL=() CAT_LOCAL=()
R[vault_up_rss]=0; R[vault_down_rss]=0
up_curl() {
  timed curl-up "$LIM" curl -sS -f -o "$OUT/curl-up.json" -X POST -T "$OUT/up.bin" -H "$AUTH" -H 'Expect:' \
    -H 'Content-Type: application/octet-stream' "$BASE/v1/upload?uploadType=media&name=curl-up.bin&parentId=root"
  CURL_UP+=("$(mibs "$SIZE" "$SECS")")
}
up_vault() {
  timed vault-sync "$LIM" "$BIN/vault" sync ${SYNC_ARGS:-} --password-file "$OUT/pw"
  VAULT_UP+=("$(ok_mibs "$SIZE" "$SECS")"); VAULT_UP_RC=$RC
  if [ "$RSS_KB" -gt "${R[vault_up_rss]}" ]; then R[vault_up_rss]=$RSS_KB; fi
}
# The reference stores what it fetches, like vault does: curl writes the file to the same disk and
# it is made durable (syncfs), as vault fsyncs its sealed blob before publishing it.
down_curl() {
  timed curl-down "$LIM" bash -c "curl -sS -f -o '$OUT/curl-down.bin' -H '$VAULT_AUTH' '$BASE/v1/files/$ID/content' && sync -f '$OUT/curl-down.bin'"
  CURL_DOWN+=("$(mibs "$SIZE" "$SECS")")
  rm -f "$OUT/curl-down.bin"
}
# vault's download alone: the file is pinned, and `vault sync` fetches it into the sealed cache.
down_vault() {
  v pin /up.bin >/dev/null
  timed vault-down "$LIM" "$BIN/vault" sync --password-file "$OUT/pw"
  VAULT_DOWN+=("$(ok_mibs "$SIZE" "$SECS")")
  if [ "$RSS_KB" -gt "${R[vault_down_rss]}" ]; then R[vault_down_rss]=$RSS_KB; fi
}
for run in $(seq 1 "$RUNS"); do
  start_server "a$run" --quiet
  new_vault "a$run"
  v put "$OUT/up.bin" / >/dev/null
  cat "$OUT/up.bin" > /dev/null   # every contender reads its source from the page cache
  # Odd runs: curl first; even runs: vault first. A flush before each contender.
  if (( run % 2 )); then first=curl; flush; up_curl; flush; up_vault; else first=vault; flush; up_vault; flush; up_curl; fi
  printf '  run %s (%s first), upload:   curl %9s MiB/s   vault sync %9s MiB/s   ratio %s\n' "$run" "$first" \
    "${CURL_UP[-1]}" "${VAULT_UP[-1]}" "$(pct "${VAULT_UP[-1]}" "${CURL_UP[-1]}")"
  ID=$(vault_file_id)
  if [ -z "$ID" ] || [ "$VAULT_UP_RC" -ne 0 ]; then
    echo "  !! run $run: the vault's upload is not on the server (file id '$ID'); download skipped"
  else
    v evict /up.bin >/dev/null
    if (( run % 2 )); then flush; down_curl; flush; down_vault; else flush; down_vault; flush; down_curl; fi
    flush
    timed curl-down-null "$LIM" curl -sS -f -o /dev/null -H "$VAULT_AUTH" "$BASE/v1/files/$ID/content"
    CURL_NULL+=("$(mibs "$SIZE" "$SECS")")
    timed vault-cat-local "$LIM" "$BIN/vault" cat /up.bin --password-file "$OUT/pw"
    CAT_LOCAL+=("$(mibs "$SIZE" "$SECS")")
    printf '  run %s (%s first), download: curl %9s MiB/s   vault sync %9s MiB/s   ratio %s\n' "$run" "$first" \
      "${CURL_DOWN[-1]}" "${VAULT_DOWN[-1]}" "$(pct "${VAULT_DOWN[-1]}" "${CURL_DOWN[-1]}")"
  fi
  stop_server; rm -rf "$OUT/a$run-"*
done
rm -f "$OUT/up.bin"
R[curl_up]=$(median "${CURL_UP[@]}"); R[vault_up]=$(median "${VAULT_UP[@]}")
R[curl_down]=$(median "${CURL_DOWN[@]}"); R[vault_down]=$(median "${VAULT_DOWN[@]}")
R[vault_cat_local]=$(median "${CAT_LOCAL[@]}"); CURL_NULL_MEDIAN=$(median "${CURL_NULL[@]}")
ratio() { [ "$1" = n/a ] || [ "$2" = n/a ] && echo n/a || pct "$1" "$2"; }
R[up_ratio]=$(ratio "${R[vault_up]}" "${R[curl_up]}"); R[down_ratio]=$(ratio "${R[vault_down]}" "${R[curl_down]}")
echo "medians of ${RUNS} run(s):"
printf '%-44s %9s MiB/s\n' "curl -T, simple upload, one request" "${R[curl_up]}"
printf '%-44s %9s MiB/s  peak RSS %s\n' "vault sync ${SYNC_ARGS:-(defaults: 4 chunks in flight)}" "${R[vault_up]}" "$(mib "${R[vault_up_rss]}")"
echo "upload: vault sync vs curl = ${R[up_ratio]}  (target >= 80 %)"
printf '%-44s %9s MiB/s\n' "curl, GET …/content to a file + syncfs" "${R[curl_down]}"
printf '%-44s %9s MiB/s  (context: nothing stored)\n' "curl, GET …/content to /dev/null" "$CURL_NULL_MEDIAN"
printf '%-44s %9s MiB/s  peak RSS %s\n' "vault sync of the pinned file (download)" "${R[vault_down]}" "$(mib "${R[vault_down_rss]}")"
printf '%-44s %9s MiB/s  (context: no download, unseal only)\n' "vault cat again, content now local" "${R[vault_cat_local]}"
echo "download: vault vs curl = ${R[down_ratio]}  (target >= 80 %)"

echo
echo "== 3. peak RSS for a ${BIG_GIB} GiB file"
start_server b --quiet
new_vault b
gen "$OUT/big.bin" big "$BIG"
v put "$OUT/big.bin" / >/dev/null
rm -f "$OUT/big.bin"   # the staged copy is what uploads
LIM=$(limit_for "$BIG")
timed big-sync "$LIM" "$BIN/vault" sync --password-file "$OUT/pw"
R[big_up_rss]=$RSS_KB; R[big_up]=$(mibs "$BIG" "$SECS")
printf '%-44s peak RSS %10s  (%s MiB/s, %s s)\n' "vault sync (upload)" "$(mib "$RSS_KB")" "${R[big_up]}" "$SECS"
v evict /big.bin >/dev/null || true
timed big-cat "$LIM" "$BIN/vault" cat /big.bin --password-file "$OUT/pw"
R[big_down_rss]=$RSS_KB; R[big_down]=$(mibs "$BIG" "$SECS")
printf '%-44s peak RSS %10s  (%s MiB/s, %s s)\n' "vault cat (download)" "$(mib "$RSS_KB")" "${R[big_down]}" "$SECS"
echo "target: <= 64 MiB each"
stop_server; rm -rf "$OUT"/b-*

echo
echo "== 4. bytes re-sent per interruption: ${INTR_MIB} MiB uploads, ${INTERRUPTIONS} interruptions each, chunk ${CHUNK_MIB} MiB"
start_server c   # request log on (stderr): it names the upload session and shows each cut request
new_vault c
# chunk_lines: the server's log lines for chunk requests, as "uploadId status bytesIn".
chunk_lines() {
  python3 - "$OUT/c.log" <<'EOF'
import json, sys
for line in open(sys.argv[1], errors="replace"):
    try: r = json.loads(line)
    except ValueError: continue
    p = r.get("path", "")
    if p.startswith("/v1/upload/") and p.endswith("/chunk"):
        print(p.split("/")[3], r.get("status"), r.get("bytesIn"))
EOF
}
# upload_status ID FIELD
upload_status() { curl -sf -H "$VAULT_AUTH" "$BASE/v1/upload/$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
new_upload_id() { chunk_lines | awk '{print $1}' | grep -vxF -f <(printf '%s\n' "$@" "") | head -n 1 || true; }
# chunk_counts ID: "cut ok" - the session's chunk requests cut short (status 499) and completed (308/201).
chunk_counts() { chunk_lines | awk -v id="$1" '$1 == id { if ($2 == 308 || $2 == 201) ok++; else if ($2 == 499) cut++ }
  END { print cut + 0, ok + 0 }'; }
all_chunk_count() { grep -c '/chunk"' "$OUT/c.log" || true; }
report_resent() {   # LABEL INTERRUPTIONS ID…: bytes re-sent over every upload session of the phase
  local label=$1 n=$2; shift 2
  local received=0 size=0 state=complete id
  for id in "$@"; do
    received=$(( received + $(upload_status "$id" bytesReceivedTotal) )); size=$(( size + $(upload_status "$id" size) ))
    [ "$(upload_status "$id" state)" = complete ] || state=incomplete
  done
  R[${label}_n]=$n; R[${label}_state]="$state, $# upload(s)"
  R[${label}_resent]=$(python3 -c "print(f'{($received-$size)/max($n,1)/1048576:.2f} MiB')")
  R[${label}_chunks]=$(python3 -c "print(f'{($received-$size)/max($n,1)/$CHUNK:.2f}')")
  printf '%-44s size %s, received %s over %s upload(s), %s\n' "$label: server counted" "$size" "$received" "$#" "$state"
  printf '%-44s %s per interruption over %s = %s chunk  (target <= 1 chunk = %s MiB)\n' \
    "$label: re-sent" "${R[${label}_resent]}" "$n" "${R[${label}_chunks]}" "$CHUNK_MIB"
}
# no_measure LABEL WHY: the phase could not interrupt anything, so it reports no figure.
no_measure() {
  echo "  !! $1: $2: this phase measured nothing"
  R[${1}_resent]=n/a; R[${1}_chunks]=n/a; R[${1}_n]=0; R[${1}_state]="nothing measured"
}
# next_upload LABEL N: puts a fresh INTR-byte file /LABEL-N.bin into the vault (staged, awaiting upload).
next_upload() {
  gen "$OUT/$1.bin" "$1$2" "$INTR"
  v put "$OUT/$1.bin" "/$1-$2.bin" >/dev/null; rm -f "$OUT/$1.bin"
}
declare -a SEEN_IDS=()   # upload sessions already accounted for

# 4a. the server cuts the connection mid-chunk (at a random byte) while `vault sync` runs (re-run if
# it gives up), until 10 cuts have landed: when an upload completes first, another file is uploaded.
# Between two cuts 0-1 chunk goes through, so the cuts hit different chunks; each request is held
# DELAY_MS before its body is read, only so that this loop keeps pace (the cut point is a byte
# count, so the pacing does not change what is re-sent). Cuts are counted from the server's log
# (status 499 on a chunk request of the session).
DELAY_MS=${DELAY_MS:-1000}
LIM=$(limit_for "$INTR"); T_END=$(( $(date +%s) + 3 * LIM ))
DROPS=0; RERUNS=0; FILES=0; declare -a DROP_IDS=()
while [ "$DROPS" -lt "$INTERRUPTIONS" ] && [ "$(date +%s)" -lt "$T_END" ]; do
  FILES=$(( FILES + 1 )); next_upload drop "$FILES"
  "$BIN/vault" sync --password-file "$OUT/pw" >/dev/null 2>>"$OUT/drop-sync.err" & BG_PID=$!
  UPID=""
  while [ -z "$UPID" ] && [ "$(date +%s)" -lt "$T_END" ]; do sleep 0.05; UPID=$(new_upload_id "${SEEN_IDS[@]}"); done
  [ -n "$UPID" ] || break
  SEEN_IDS+=("$UPID"); DROP_IDS+=("$UPID"); BASE_DROPS=$DROPS
  while [ "$DROPS" -lt "$INTERRUPTIONS" ] && [ "$(date +%s)" -lt "$T_END" ]; do
    read -r before ok0 < <(chunk_counts "$UPID")
    gap=$(( RANDOM % 2 ))
    faults "{\"delayMs\": $DELAY_MS}"
    while :; do   # let `gap` chunks through, then arm one cut
      read -r cuts ok < <(chunk_counts "$UPID")
      [ "$ok" -ge $(( ok0 + gap )) ] && break
      [ "$(date +%s)" -lt "$T_END" ] || break
      if ! kill -0 "$BG_PID" 2>/dev/null; then break; fi
      sleep 0.02
    done
    # The cut is armed for the next request. A request that continues a cut-off chunk may be shorter
    # than the cut point and then ends normally, so re-arm until a cut lands.
    arm() { faults "{\"dropAfterBytes\": $(( (RANDOM % (CHUNK >> 16)) << 16 | 4096 )), \"dropCount\": 1, \"delayMs\": $DELAY_MS}"; ARMED=$(date +%s); }
    arm
    while read -r cuts ok < <(chunk_counts "$UPID"); [ "$cuts" -le "$before" ] && [ "$(date +%s)" -lt "$T_END" ]; do
      if ! kill -0 "$BG_PID" 2>/dev/null; then   # the sync gave up (or finished): run it again
        wait "$BG_PID" 2>/dev/null || true
        [ "$(upload_status "$UPID" state)" = complete ] && break 2
        RERUNS=$(( RERUNS + 1 )); "$BIN/vault" sync --password-file "$OUT/pw" >/dev/null 2>>"$OUT/drop-sync.err" & BG_PID=$!
      fi
      [ $(( $(date +%s) - ARMED )) -ge $(( 3 * DELAY_MS / 1000 + 2 )) ] && arm
      sleep 0.02
    done
    DROPS=$(( BASE_DROPS + cuts ))
  done
  faults '{}'
  read -r cuts ok < <(chunk_counts "$UPID"); DROPS=$(( BASE_DROPS + cuts ))   # a cut may land as the loop ends
  while kill -0 "$BG_PID" 2>/dev/null && [ "$(date +%s)" -lt "$T_END" ]; do sleep 0.2; done
  kill -9 "$BG_PID" 2>/dev/null || true; wait "$BG_PID" 2>/dev/null || true; BG_PID=""
  for _ in 1 2 3; do   # finish it if the last sync gave up after the last drop
    [ "$(upload_status "$UPID" state)" != complete ] || break
    RERUNS=$(( RERUNS + 1 )); timeout -k 5 "$LIM" "$BIN/vault" sync --password-file "$OUT/pw" >/dev/null 2>>"$OUT/drop-sync.err" || true
  done
done
faults '{}'
if [ "$DROPS" -gt 0 ]; then
  echo "server drops: $DROPS connection(s) cut mid-chunk over $FILES upload(s), vault sync re-run $RERUNS time(s)"
  report_resent drops "$DROPS" "${DROP_IDS[@]}"
  [ "$DROPS" -ge "$INTERRUPTIONS" ] || echo "  note: only $DROPS of $INTERRUPTIONS cuts landed before the time ran out"
elif [ "${#DROP_IDS[@]}" -gt 0 ]; then
  no_measure drops "no connection was cut mid-chunk before the uploads completed or the time ran out"
else
  no_measure drops "no upload session seen on the server ($(tail -n 3 "$OUT/drop-sync.err" | tr '\n' ' '))"
fi

# 4b. `kill -9` of `vault sync` 10 times, each at a random moment within one chunk's sending time
# (from the throughput of phase 1) after that run's first chunk arrived; when an upload completes
# first, another file is uploaded. Each file's upload is finished by one `vault sync`. No pacing
# here: a kill lands wherever the client is. A kill counts if the upload was still incomplete
# afterwards.
CHUNK_S=$(python3 -c "r='${R[vault_up]}'; print(f'{$CHUNK/1048576/float(r):.4f}' if r not in ('','n/a','0.0') else '0.1')")
CHUNK_MS=$(python3 -c "print(max(1, round($CHUNK_S * 1000)))")
KILLS=0; FILES=0; FINAL_RC=0; T_END=$(( $(date +%s) + 3 * LIM )); declare -a KILL_IDS=()
while [ "$KILLS" -lt "$INTERRUPTIONS" ] && [ "$(date +%s)" -lt "$T_END" ]; do
  FILES=$(( FILES + 1 )); next_upload kill "$FILES"; UPID=""
  while [ "$KILLS" -lt "$INTERRUPTIONS" ] && [ "$(date +%s)" -lt "$T_END" ]; do
    seen=$(all_chunk_count)
    "$BIN/vault" sync --password-file "$OUT/pw" >/dev/null 2>>"$OUT/kill-sync.err" & BG_PID=$!
    while [ "$(all_chunk_count)" -le "$seen" ] && kill -0 "$BG_PID" 2>/dev/null && [ "$(date +%s)" -lt "$T_END" ]; do sleep 0.005; done
    sleep "$(( (r = RANDOM % CHUNK_MS) / 1000 )).$(printf %03d $(( r % 1000 )))"
    kill -9 "$BG_PID" 2>/dev/null || true
    wait "$BG_PID" 2>/dev/null || true; BG_PID=""
    if [ -z "$UPID" ]; then UPID=$(new_upload_id "${SEEN_IDS[@]}"); [ -n "$UPID" ] && SEEN_IDS+=("$UPID") && KILL_IDS+=("$UPID"); fi
    [ -n "$UPID" ] && [ "$(upload_status "$UPID" state)" = complete ] && break
    KILLS=$(( KILLS + 1 ))
  done
  timed kill-final "$LIM" "$BIN/vault" sync --password-file "$OUT/pw"
  [ "$RC" -eq 0 ] || FINAL_RC=$RC
  if [ -z "$UPID" ]; then UPID=$(new_upload_id "${SEEN_IDS[@]}"); [ -n "$UPID" ] && SEEN_IDS+=("$UPID") && KILL_IDS+=("$UPID"); fi
  [ -n "$UPID" ] || break
done
if [ "$KILLS" -gt 0 ] && [ "${#KILL_IDS[@]}" -gt 0 ]; then
  echo "kill -9 of vault sync: $KILLS time(s) mid-upload over $FILES upload(s) (a chunk time is ~${CHUNK_S} s), each finished by one vault sync (last exit $FINAL_RC)"
  report_resent kills "$KILLS" "${KILL_IDS[@]}"
  [ "$KILLS" -ge "$INTERRUPTIONS" ] || echo "  note: only $KILLS of $INTERRUPTIONS kills landed mid-upload before the time ran out"
elif [ "${#KILL_IDS[@]}" -gt 0 ]; then
  no_measure kills "every upload completed before a kill landed mid-upload"
else
  no_measure kills "no upload session seen on the server ($(tail -n 3 "$OUT/kill-sync.err" | tr '\n' ' '))"
fi
stop_server

echo
echo "== summary ($(date -u +%FT%TZ), $(nproc) cores, chunk ${CHUNK_MIB} MiB)"
printf '%-52s %s\n' \
  "upload ${SIZE_MIB} MiB: curl simple upload (median of ${RUNS})" "${R[curl_up]} MiB/s" \
  "upload ${SIZE_MIB} MiB: vault sync" "${R[vault_up]} MiB/s  (peak RSS $(mib "${R[vault_up_rss]}"))" \
  "upload ratio vault/curl (target >= 80 %)" "${R[up_ratio]}" \
  "download ${SIZE_MIB} MiB: curl" "${R[curl_down]} MiB/s" \
  "download ${SIZE_MIB} MiB: vault sync (pinned)" "${R[vault_down]} MiB/s  (peak RSS $(mib "${R[vault_down_rss]}"))" \
  "download ratio vault/curl (target >= 80 %)" "${R[down_ratio]}" \
  "(context) vault cat, content already local" "${R[vault_cat_local]} MiB/s" \
  "peak RSS vault sync, ${BIG_GIB} GiB (target <= 64 MiB)" "$(mib "${R[big_up_rss]}")  (${R[big_up]} MiB/s)" \
  "peak RSS vault cat, ${BIG_GIB} GiB (target <= 64 MiB)" "$(mib "${R[big_down_rss]}")  (${R[big_down]} MiB/s)" \
  "re-sent per server drop (${R[drops_n]} drops; <= 1 chunk)" "${R[drops_resent]} = ${R[drops_chunks]} chunk (upload ${R[drops_state]})" \
  "re-sent per kill -9 (${R[kills_n]} kills; <= 1 chunk)" "${R[kills_resent]} = ${R[kills_chunks]} chunk (upload ${R[kills_state]})"
exit 0
