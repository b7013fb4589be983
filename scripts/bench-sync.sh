#!/usr/bin/env bash
# Benchmarks of two-way sync (issue 10, "Targets"), side by side with their reference in one run,
# against a real vault-server on loopback:
#  1. the first pull of an account of NODES nodes (metadata only) into a fresh device (`vault join`,
#     then `vault sync`)  vs  curl fetching the same listing pages (`GET /v1/files?scope=all`, every
#     page) to /dev/null: whole-process time (target <= 10 s), ratio, peak RSS (target <= 64 MiB)
#  2. an incremental pull of 1,000 changes (another device created 1,000 files)  (target <= 1 s)
#  3. the simulation's seeds per second (scripts/sim.sh, 1,000 seeds)
# The account is seeded straight into the server's database with nodes sealed by the vault's own
# codec (Tests/VaultCLITests/SyncBenchSeed.swift), as a device would have pushed them.
# Usage: scripts/bench-sync.sh [NODES=100000]
# Reports figures and ratios against their targets; never fails on a missed target (exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
for p in time sqlite3; do dpkg -s "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; done
NODES=${1:-100000}
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [NODES]  (a positive integer)" >&2; exit 2; }

swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
swift build -c release --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
swift build -c release --product vault-sim 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1   # the seeding helper
BIN=$(swift build -c release --show-bin-path)

OUT=$(mktemp -d "${TMPDIR:-/tmp}/bench-sync.XXXXXX")
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf 'bench password\n' > "$OUT/pw"
printf 'bench-server-password\n' > "$OUT/spw"
export VAULT_NO_KEYRING=1 VAULT_METERED=0 VAULT_BACKGROUND_DOWNLOADS=0
v() { "$BIN/vault" "$@" --password-file "$OUT/pw" 2> >(grep -v 'no Secret Service' >&2); }
# timed LABEL CMD…: runs CMD (stdout to /dev/null) under GNU time; sets SECS and RSS_KB.
timed() {
  local label=$1; shift
  local s e; s=$(date +%s.%N)
  /usr/bin/time -f %M -o "$OUT/$label.rss" timeout -k 10 600 "$@" >/dev/null 2>"$OUT/$label.err" \
    || { echo "  !! $label failed: $(tail -n 3 "$OUT/$label.err" | tr '\n' ' ')"; }
  e=$(date +%s.%N)
  SECS=$(python3 -c "print(f'{$e-$s:.3f}')")
  RSS_KB=$(tail -n 1 "$OUT/$label.rss" | grep -E '^[0-9]+$' || echo 0)
}
mib() { python3 -c "print(f'{$1/1024:.1f} MiB')"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

"$BIN/vault-server" user add bench --data "$OUT/server" --password-file "$OUT/spw" >/dev/null
"$BIN/vault-server" serve --data "$OUT/server" --listen 127.0.0.1:0 >"$OUT/server.out" 2>"$OUT/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q listening "$OUT/server.out" 2>/dev/null && break; sleep 0.1; done
BASE="http://127.0.0.1:$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/server.out")"
TOKEN=$(curl -sf -X POST "$BASE/v1/auth/token" -d '{"username":"bench","password":"bench-server-password"}' \
  | python3 -c "import json,sys; print(json.load(sys.stdin)['token'])")

# Device A: the vault, its envelope on the server; then NODES sealed nodes into the database.
export VAULT_HOME="$OUT/a"
v init --kdf-ops 1 --kdf-mem 8M >/dev/null
v login --server "$BASE" --user bench --server-password-file "$OUT/spw" >/dev/null
OWNER=$(sqlite3 "$OUT/server/meta.db" "SELECT id FROM users WHERE name = 'bench'")
s=$(date +%s.%N)
VAULT_BENCH_HOME="$OUT/a" VAULT_BENCH_PASSWORD_FILE="$OUT/pw" VAULT_BENCH_OWNER="$OWNER" VAULT_BENCH_SQL="$OUT/seed.sql" \
  VAULT_BENCH_NODES="$NODES" swift test --skip-build --filter 'VaultCLITests.SyncBenchSeed' >"$OUT/seed.log" 2>&1 \
  || { echo "seeding failed:"; tail -n 20 "$OUT/seed.log"; exit 1; }
sqlite3 "$OUT/server/meta.db" < "$OUT/seed.sql"
echo "seeded $(sqlite3 "$OUT/server/meta.db" "SELECT count(*) FROM files WHERE owner = '$OWNER'") nodes in $(python3 -c "print(f'{$(date +%s.%N)-$s:.1f}')") s"

echo
echo "== 1. first pull of $NODES nodes (metadata only) into a fresh device"
# curl: every page of the same listing the device reads (page size 5000), to /dev/null.
curl_pages() {
  local token=""
  while :; do
    local url="$BASE/v1/files?scope=all&pageSize=5000"
    [ -n "$token" ] && url="$url&pageToken=$token"
    curl -sf -H "Authorization: Bearer $TOKEN" "$url" -o "$OUT/page.json"
    token=$(grep -o '"nextPageToken":"[^"]*"' "$OUT/page.json" | cut -d'"' -f4 || true)
    [ -n "$token" ] || break
  done
}
export -f curl_pages; export BASE TOKEN OUT
timed curl bash -c curl_pages
CURL_S=$SECS
export VAULT_HOME="$OUT/b"
v join --server "$BASE" --user bench --server-password-file "$OUT/spw" >/dev/null
timed pull "$BIN/vault" sync --password-file "$OUT/pw"
PULL_S=$SECS; PULL_RSS=$RSS_KB
COUNT=$(v tree --json | python3 -c "
import json,sys
def n(x): return 1 + sum(n(c) for c in x.get('children') or [])
print(n(json.load(sys.stdin)) - 1)")
printf '%-44s %8s s\n' "curl, the same listing pages" "$CURL_S"
printf '%-44s %8s s   ratio %s   peak RSS %s   (targets <= 10 s, <= 64 MiB)\n' "vault sync (join, first pull: $COUNT nodes)" "$PULL_S" "$(ratio "$PULL_S" "$CURL_S")" "$(mib "$PULL_RSS")"

echo
echo "== 2. incremental pull of 1,000 changes"
mkdir -p "$OUT/thousand"
for i in $(seq 1000); do printf '%s\n' "$i" > "$OUT/thousand/f$i.txt"; done
export VAULT_HOME="$OUT/a"
v put -r "$OUT/thousand" /thousand >/dev/null 2>&1
v sync >/dev/null 2>&1 || { echo "  !! the other device's sync failed"; v sync 2>&1 | tail -n 3; }
export VAULT_HOME="$OUT/b"
timed incremental "$BIN/vault" sync --password-file "$OUT/pw"
printf '%-44s %8s s   peak RSS %s   (target <= 1 s)\n' "vault sync pulling 1,001 changes" "$SECS" "$(mib "$RSS_KB")"

echo
echo "== 3. the simulation"
"$BIN/vault-sim" 1000 | tail -n 2
