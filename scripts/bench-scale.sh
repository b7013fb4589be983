#!/usr/bin/env bash
# Benchmarks of scale (issue 21, "Targets"): each figure side by side with its reference in one
# run, release build, cheap KDF, a real vault-server on loopback. Two accounts are seeded straight
# into the server's database (Tests/VaultCLITests/SyncBenchSeed.swift, layout folders1000: folders
# of 1,000 nodes at the root, the folder and 999 files): one of NODES nodes, one of 1,000 (the small
# side). Each is pulled into a fresh device (`vault join`, `vault sync`). Measured:
#  1. whole metadata.db bytes per node after the first pull of NODES nodes (target <= 300 B/node),
#     and after `put -r` of BENCH_PUT_FILES files into a fresh vault (the put -r run below)
#  2. `vault status` and `vault storage`, whole process, at NODES vs at 1,000 nodes (target <= 1.5x)
#  3. `vault ls` of a 1,000-entry folder at NODES vs at 1,000 nodes (target <= 1.5x)
#  4. the first pull of NODES nodes vs curl fetching the same listing pages (target <= 2x), and the
#     pull's peak RSS (target <= 64 MiB)
#  5. `put -r` of BENCH_PUT_FILES (5000) files of 4 KiB vs `restic backup` of the same tree to a
#     local repository (target: vault >= 1x restic's speed, i.e. restic time / vault time >= 1)
# Timings of status, storage and ls are the median of BENCH_REPEAT (5) runs.
# Usage: scripts/bench-scale.sh [NODES=100000]   (env: BENCH_PUT_FILES=5000, BENCH_REPEAT=5)
# Reports figures and ratios against their targets; never fails on a missed target (exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
for p in time sqlite3 restic; do dpkg -s "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; done
NODES=${1:-100000}
SMALL=1000
PUT_FILES=${BENCH_PUT_FILES:-5000}
REPEAT=${BENCH_REPEAT:-5}
for n in "$NODES" "$PUT_FILES" "$REPEAT"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [NODES]  (a positive integer; BENCH_PUT_FILES, BENCH_REPEAT likewise)" >&2; exit 2; }
done

swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
swift build -c release --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1   # the seeding helper
BIN=$(swift build -c release --show-bin-path)

BENCH_NAME=bench-scale
source scripts/lib/seeded-account.sh

# the whole database: metadata.db and, when there is one, its WAL
db_bytes() { local s=0 f; for f in "$1/metadata.db" "$1/metadata.db-wal"; do [ -f "$f" ] && s=$((s + $(stat -c %s "$f"))); done; echo "$s"; }
per() { python3 -c "print(f'{$1/max($2,1):.0f}')"; }
# median LABEL CMD…: runs CMD REPEAT times under bench_timed; sets MED (seconds, the median)
median() {
  local label=$1; shift; local all=()
  for _ in $(seq "$REPEAT"); do bench_timed "$label" "$@"; all+=("$SECS"); done
  MED=$(printf '%s\n' "${all[@]}" | sort -n | python3 -c "import sys; x=[float(l) for l in sys.stdin]; print(f'{x[len(x)//2]:.3f}')")
}

bench_server_start big small
bench_seed "$OUT/a-big" big "$NODES" folders1000
bench_seed "$OUT/a-small" small "$SMALL" folders1000
export BASE OUT
export -f bench_curl_pages

echo
echo "== first pull (metadata only) into a fresh device: $NODES nodes, and $SMALL for the small side"
TOKEN=$(bench_token big)
export TOKEN
bench_timed curl bash -c 'bench_curl_pages "$TOKEN"'
CURL_S=$SECS
bench_timed curl-5000 bash -c 'bench_curl_pages "$TOKEN" 5000'   # for reference: the server's largest pages
CURL5_S=$SECS
unset TOKEN
export VAULT_HOME="$OUT/b-big"
v join --server "$BASE" --user big --server-password-file "$OUT/spw" >/dev/null
bench_timed pull "$BIN/vault" sync --password-file "$OUT/pw"
PULL_S=$SECS; PULL_RSS=$RSS_KB
BIG_COUNT=$(bench_count_nodes)
BIG_DB=$(db_bytes "$VAULT_HOME")
export VAULT_HOME="$OUT/b-small"
v join --server "$BASE" --user small --server-password-file "$OUT/spw" >/dev/null
bench_timed pull-small "$BIN/vault" sync --password-file "$OUT/pw"
SMALL_PULL_S=$SECS
SMALL_COUNT=$(bench_count_nodes)
SMALL_DB=$(db_bytes "$VAULT_HOME")
PULL_RATIO=$(bench_ratio "$PULL_S" "$CURL_S")
BPN=$(per "$BIG_DB" "$BIG_COUNT")
printf '%-52s %10s s\n' "curl, the same listing pages ($NODES nodes, 1000 a page)" "$CURL_S"
printf '%-52s %10s s\n' "curl, pages of 5000 (for reference; not the target's)" "$CURL5_S"
printf '%-52s %10s s\n' "vault sync, first pull of $BIG_COUNT nodes" "$PULL_S"
echo "first pull ratio (vault / curl): $PULL_RATIO   (target <= 2x)"
echo "first pull peak RSS: $(bench_mib "$PULL_RSS")   (target <= 64 MiB)"
printf '%-52s %10s s\n' "vault sync, first pull of $SMALL_COUNT nodes (small side)" "$SMALL_PULL_S"
echo "metadata.db after first pull of $BIG_COUNT nodes: $BIG_DB bytes"
echo "metadata.db bytes/node after first pull ($BIG_COUNT nodes): $BPN   (target <= 300 B/node)"
echo "metadata.db bytes/node after first pull ($SMALL_COUNT nodes, small side): $(per "$SMALL_DB" "$SMALL_COUNT")"

echo
echo "== vault status, vault storage, vault ls of a 1,000-entry folder: $NODES vs $SMALL nodes (median of $REPEAT)"
declare -A T
for side in big small; do
  export VAULT_HOME="$OUT/b-$side"
  median "status-$side" "$BIN/vault" status --password-file "$OUT/pw"; T[status-$side]=$MED
  median "storage-$side" "$BIN/vault" storage --password-file "$OUT/pw"; T[storage-$side]=$MED
  median "ls-$side" "$BIN/vault" ls "/folder 0" --password-file "$OUT/pw"; T[ls-$side]=$MED
done
LS_N=$(VAULT_HOME="$OUT/b-big" v ls "/folder 0" | wc -l)
LS_S=$(VAULT_HOME="$OUT/b-small" v ls "/folder 0" | wc -l)
STATUS_RATIO=$(bench_ratio "${T[status-big]}" "${T[status-small]}")
STORAGE_RATIO=$(bench_ratio "${T[storage-big]}" "${T[storage-small]}")
LS_RATIO=$(bench_ratio "${T[ls-big]}" "${T[ls-small]}")
printf '%-52s %10s s\n' "vault status at $NODES nodes" "${T[status-big]}" "vault status at $SMALL nodes" "${T[status-small]}"
echo "status ratio ($NODES / $SMALL nodes): $STATUS_RATIO   (target <= 1.5x)"
printf '%-52s %10s s\n' "vault storage at $NODES nodes" "${T[storage-big]}" "vault storage at $SMALL nodes" "${T[storage-small]}"
echo "storage ratio ($NODES / $SMALL nodes): $STORAGE_RATIO   (target <= 1.5x)"
printf '%-52s %10s s\n' "vault ls /folder 0 ($LS_N lines) at $NODES nodes" "${T[ls-big]}" "vault ls /folder 0 ($LS_S lines) at $SMALL nodes" "${T[ls-small]}"
echo "ls ratio ($NODES / $SMALL nodes): $LS_RATIO   (target <= 1.5x)"

echo
echo "== put -r of $PUT_FILES files of 4 KiB (folders of 1,000) vs restic backup of the same tree"
echo "(measured at BENCH_PUT_FILES=$PUT_FILES files, not at NODES; put -r stages into the vault, no push)"
bench_make_tree "$OUT/tree" "$PUT_FILES"
sync
export VAULT_HOME="$OUT/c"
v init --kdf-ops 1 --kdf-mem 8M >/dev/null
bench_timed put "$BIN/vault" put -r "$OUT/tree" /tree --password-file "$OUT/pw"
PUT_S=$SECS; PUT_RSS=$RSS_KB
PUT_COUNT=$(bench_count_nodes)
PUT_DB=$(db_bytes "$VAULT_HOME")
export RESTIC_PASSWORD_FILE="$OUT/pw" RESTIC_REPOSITORY="$OUT/restic" RESTIC_CACHE_DIR="$OUT/restic-cache"
restic init >/dev/null 2>&1
bench_timed restic restic backup -q "$OUT/tree"
RESTIC_S=$SECS
PUT_RATIO=$(bench_ratio "$RESTIC_S" "$PUT_S")
printf '%-52s %10s s   peak RSS %s\n' "vault put -r ($PUT_COUNT nodes)" "$PUT_S" "$(bench_mib "$PUT_RSS")"
printf '%-52s %10s s\n' "restic backup (local repository)" "$RESTIC_S"
echo "put -r vs restic (restic time / vault time, speed relative to restic): $PUT_RATIO   (target >= 1x)"
echo "metadata.db bytes/node after put -r ($PUT_COUNT nodes, BENCH_PUT_FILES=$PUT_FILES): $(per "$PUT_DB" "$PUT_COUNT")   (target <= 300 B/node)"

echo
echo "scale: $NODES nodes, $BPN bytes/node, status ratio $STATUS_RATIO, ls ratio $LS_RATIO, first pull ratio $PULL_RATIO, put -r vs restic $PUT_RATIO"
