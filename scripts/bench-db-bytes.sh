#!/usr/bin/env bash
# Where the bytes of metadata.db go (issue 21): seeds NODES nodes (layout folders1000, as
# bench-scale.sh does) into a real vault-server, pulls them into a fresh device, then prints the
# bytes per table and per index (SQLCipher's dbstat over the encrypted file, opened with the key
# scripts/independent-decrypt.py derives from the password), the total and bytes per node; then
# the same after `put -r` of BENCH_PUT_FILES files. Sizes do not depend on the build mode, so
# BUILD=debug (the default: the seeding needs the test build anyway) is fine; BUILD=release
# also prints release timings of the pull.
# BENCH_UPGRADE_BIN=DIR (with BENCH_BIN an older build) also times DIR's vault upgrading the
# pulled database on its first open, and prints the breakdown again.
# BENCH_KEEP_PLAIN=DIR keeps the plain copies (of this synthetic data) in DIR, for experiments.
# Usage: scripts/bench-db-bytes.sh [NODES=20000]   (env: BUILD=debug|release, BENCH_PUT_FILES=2000)
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${1:-20000}
PUT_FILES=${BENCH_PUT_FILES:-2000}
BUILD=${BUILD:-debug}
for n in "$NODES" "$PUT_FILES"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [NODES]  (a positive integer; BENCH_PUT_FILES likewise)" >&2; exit 2; }
done
for p in time sqlite3 sqlcipher; do command -v "$p" >/dev/null || [ -x "/usr/bin/$p" ] || { echo "needs $p (scripts/install-deps.sh)" >&2; exit 2; }; done
python3 -c "import cryptography, argon2" 2>/dev/null || python3 -m pip install --quiet cryptography argon2-cffi
if [ "$BUILD" = release ]; then
  swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  swift build -c release --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
fi
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1   # the seeding helper
BIN=${BENCH_BIN:-$(swift build -c "$BUILD" --show-bin-path)}   # BENCH_BIN: another build of vault and vault-server (a before/after)

BENCH_NAME=bench-db-bytes
source scripts/lib/seeded-account.sh

# breakdown HOME COUNT: bytes per table and index (dbstat), total, bytes per node
breakdown() {
  local home=$1 count=$2 key
  key=$(python3 scripts/independent-decrypt.py "$home" --password-file "$OUT/pw" --print-db-key 2>&1 \
        | sed -n 's/.*database key: \([0-9a-f]*\)$/\1/p')
  [ -n "$key" ] || { echo "  !! no database key"; return; }
  # A plain copy (synthetic data, in OUT, removed on exit) laid out as SQLCipher lays the file:
  # the same page size, 48 reserved bytes per page (IV and HMAC), rebuilt by VACUUM; then dbstat.
  local ps
  ps=$(printf "PRAGMA key = \"x'%s'\";\nPRAGMA cipher_page_size;\n" "$key" | sqlcipher -batch -init /dev/null "$home/metadata.db" | tail -n 1)
  rm -f "$OUT/plain.db"
  printf "PRAGMA key = \"x'%s'\";\nATTACH DATABASE '%s' AS plain KEY '';\nPRAGMA plain.page_size = %s;\nSELECT sqlcipher_export('plain');\nDETACH DATABASE plain;\n" \
    "$key" "$OUT/plain.db" "$ps" | sqlcipher -batch -init /dev/null "$home/metadata.db" >/dev/null
  printf ".filectrl reserve_bytes 48\nVACUUM;\n.mode list\n.separator ' '\n%s\n" \
    "SELECT name, sum(pgsize), sum(payload), count(*) FROM dbstat GROUP BY name ORDER BY sum(pgsize) DESC;" \
    | sqlite3 -batch -init /dev/null "$OUT/plain.db" \
    | awk -v n="$count" -v ps="$ps" 'NF==4 { printf "  %-32s %12d bytes %8.1f B/node  (payload %d, %d pages)\n", $1, $2, $2/n, $3, $4; t+=$2 }
        END { printf "  %-32s %12d bytes %8.1f B/node  (page size %s)\n", "all pages", t, t/n, ps }'
  [ -n "${BENCH_KEEP_PLAIN:-}" ] && cp "$OUT/plain.db" "$BENCH_KEEP_PLAIN/$(basename "$home").db"
  rm -f "$OUT/plain.db"
  key=""
  local f=$(stat -c %s "$home/metadata.db")
  echo "  metadata.db file: $f bytes, $(python3 -c "print(f'{$f/max($count,1):.0f}')") B/node over $count nodes"
}

bench_server_start big
bench_seed "$OUT/a-big" big "$NODES" folders1000
export VAULT_HOME="$OUT/b-big"
v join --server "$BASE" --user big --server-password-file "$OUT/spw" >/dev/null
bench_timed pull "$BIN/vault" sync --password-file "$OUT/pw"
echo "first pull of $NODES nodes ($BUILD build): $SECS s, peak RSS $(bench_mib "$RSS_KB")"
COUNT=$(bench_count_nodes)
echo "== metadata.db after the first pull of $COUNT nodes"
breakdown "$VAULT_HOME" "$COUNT"
if [ -n "${BENCH_UPGRADE_BIN:-}" ]; then   # the pull's vault (BENCH_BIN, an older one) upgraded by this one
  bench_timed upgrade "$BENCH_UPGRADE_BIN/vault" status --password-file "$OUT/pw"
  echo "== the same after $BENCH_UPGRADE_BIN/vault upgraded it (its first open: $SECS s, peak RSS $(bench_mib "$RSS_KB"))"
  breakdown "$VAULT_HOME" "$COUNT"
fi

bench_make_tree "$OUT/tree" "$PUT_FILES"
export VAULT_HOME="$OUT/c"
v init --kdf-ops 1 --kdf-mem 8M >/dev/null
bench_timed put "$BIN/vault" put -r "$OUT/tree" /tree --password-file "$OUT/pw"
COUNT=$(bench_count_nodes)
echo "== metadata.db after put -r of $COUNT nodes ($SECS s)"
breakdown "$VAULT_HOME" "$COUNT"
