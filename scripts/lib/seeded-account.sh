# Sourced by the sync benchmarks (bench-sync.sh, bench-scale.sh) after they set BIN (the release
# products) and BENCH_NAME. Makes OUT (the scratch folder, named after BENCH_NAME) and a trap that
# stops the server and removes OUT on exit. Gives:
#   bench_timed LABEL CMD…      runs CMD (stdout to /dev/null) under GNU time; sets SECS, RSS_KB and
#                               CPU_S (user + system seconds); bench_server_cpu: the server's CPU seconds
#   bench_mib KB, bench_ratio A B
#   bench_server_start USER…    adds USERs (password "$OUT/spw"), starts vault-server on loopback;
#                               sets SERVER_PID (stopped on exit) and BASE
#   bench_token USER            prints a bearer token for USER
#   bench_seed HOME USER NODES [LAYOUT]   a vault at HOME logged in as USER, then NODES nodes sealed
#                               for it straight into the server database (SyncBenchSeed.swift)
#   bench_curl_pages TOKEN [PAGE]  every page of `GET /v1/files?scope=all` to a file, PAGE nodes a
#                               page (default 1000: the pages `vault` asks for, RemotePuller.defaultPage)
#   bench_count_nodes           the nodes in the current VAULT_HOME's tree
#   bench_make_tree DIR N       N files of 4 KiB of random bytes in folders of 1,000 under DIR (for put -r)
# and `v CMD…`, the vault with the bench password. Needs `swift build --build-tests` done.
OUT=$(mktemp -d "${TMPDIR:-/tmp}/${BENCH_NAME:-bench}.XXXXXX")
SERVER_PID=""
bench_cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
printf 'bench password\n' > "$OUT/pw"
printf 'bench-server-password\n' > "$OUT/spw"
export VAULT_NO_KEYRING=1 VAULT_METERED=0 VAULT_BACKGROUND_DOWNLOADS=0
v() { "$BIN/vault" "$@" --password-file "$OUT/pw" 2> >(grep -v 'no Secret Service' >&2); }
bench_timed() {
  local label=$1; shift
  local s e u sy m; s=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$OUT/$label.rss" timeout -k 10 600 "$@" >/dev/null 2>"$OUT/$label.err" \
    || { echo "  !! $label failed: $(tail -n 3 "$OUT/$label.err" | tr '\n' ' ')"; }
  e=$(date +%s.%N)
  SECS=$(python3 -c "print(f'{$e-$s:.3f}')")
  read -r u sy m < <(tail -n 1 "$OUT/$label.rss") || true
  [[ "${m:-}" =~ ^[0-9]+$ ]] && RSS_KB=$m || RSS_KB=0
  CPU_S=$(python3 -c "print(f'{${u:-0}+${sy:-0}:.2f}')" 2>/dev/null || echo 0)
}
# CPU seconds (user + system) the server has used so far: what a figure cost the server, less
# sensitive to a loaded machine than wall time.
bench_server_cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$SERVER_PID/stat"; }
bench_mib() { python3 -c "print(f'{$1/1024:.1f} MiB')"; }
bench_ratio() { python3 -c "print(f'{$1/max($2,1e-9):.2f}')"; }
bench_server_start() {
  local u
  for u in "$@"; do "$BIN/vault-server" user add "$u" --data "$OUT/server" --password-file "$OUT/spw" >/dev/null; done
  "$BIN/vault-server" serve --data "$OUT/server" --listen 127.0.0.1:0 >"$OUT/server.out" 2>"$OUT/server.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q listening "$OUT/server.out" 2>/dev/null && break; sleep 0.1; done
  BASE="http://127.0.0.1:$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/server.out")"
}
bench_token() {
  curl -sf -X POST "$BASE/v1/auth/token" -d "{\"username\":\"$1\",\"password\":\"bench-server-password\"}" \
    | python3 -c "import json,sys; print(json.load(sys.stdin)['token'])"
}
bench_seed() {
  local home=$1 user=$2 nodes=$3 layout=${4:-} owner s
  VAULT_HOME="$home" v init --kdf-ops 1 --kdf-mem 8M >/dev/null
  VAULT_HOME="$home" v login --server "$BASE" --user "$user" --server-password-file "$OUT/spw" >/dev/null
  owner=$(sqlite3 "$OUT/server/meta.db" "SELECT id FROM users WHERE name = '$user'")
  s=$(date +%s.%N)
  VAULT_BENCH_HOME="$home" VAULT_BENCH_PASSWORD_FILE="$OUT/pw" VAULT_BENCH_OWNER="$owner" VAULT_BENCH_SQL="$OUT/seed-$user.sql" \
    VAULT_BENCH_NODES="$nodes" VAULT_BENCH_LAYOUT="$layout" swift test --skip-build --filter 'VaultCLITests.SyncBenchSeed' >"$OUT/seed-$user.log" 2>&1 \
    || { echo "seeding failed:"; tail -n 20 "$OUT/seed-$user.log"; exit 1; }
  sqlite3 "$OUT/server/meta.db" < "$OUT/seed-$user.sql"
  rm -f "$OUT/seed-$user.sql"
  echo "seeded $(sqlite3 "$OUT/server/meta.db" "SELECT count(*) FROM files WHERE owner = '$owner'") nodes for $user in $(python3 -c "print(f'{$(date +%s.%N)-$s:.1f}')") s"
}
bench_curl_pages() {
  local token="" page=${2:-1000}
  while :; do
    local url="$BASE/v1/files?scope=all&pageSize=$page"
    [ -n "$token" ] && url="$url&pageToken=$token"
    curl -sf -H "Authorization: Bearer $1" "$url" -o "$OUT/page.json"
    token=$(grep -o '"nextPageToken":"[^"]*"' "$OUT/page.json" | cut -d'"' -f4 || true)
    [ -n "$token" ] || break
  done
}
bench_count_nodes() {
  v tree --json | python3 -c "
import json,sys
def n(x): return 1 + sum(n(c) for c in x.get('children') or [])
print(n(json.load(sys.stdin)) - 1)"
}
bench_make_tree() {
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 1000}")
    if i % 1000 == 0: os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i}.bin"), "wb") as f: f.write(os.urandom(4096))
PY
}
