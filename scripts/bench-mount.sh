#!/usr/bin/env bash
# `vault mount` (issue 19 "Targets"), side by side with gocryptfs and rclone (crypt over a local
# folder; the script installs both from Debian when they are missing), in one run:
#  1. sequential read of a cached SIZE file through the mount, cold (kernel caches dropped when
#     root) and again (target: >= gocryptfs, >= 1 GB/s; the second >= 3x the first)
#  2. sequential write of SIZE through the mount, closed with fsync (target: >= 80 % of gocryptfs),
#     vault and gocryptfs in turn, WRITE_ROUNDS times (default 3): the figure is each one's median
#     (one 1 GiB write + fsync varies by tens of percent from run to run on this machine)
#  3. `ls -lR` of a NODES-node tree (target: <= 2 s and <= rclone's), and again (entries and
#     attributes cached 30 s)
#  3b. a change beside the mount (`vault mv` in another process) with the NODES inodes known to the
#     kernel: seconds until the old name is gone through the mount, and the mount's check of them
#  4. peak RSS of the mount process (VmHWM; target: <= 64 MiB)
#  5. a 4 KiB read at SIZE/2 of a not-downloaded SIZE file (a second vault synced to a loopback
#     vault-server, the file evicted): sealed bytes the server sent, from its request log, and the
#     read's time (target: <= 1 MiB and <= 200 ms)
# Usage: scripts/bench-mount.sh [SIZE=1G] [NODES=100000]   (VAULT_BENCH_BIN: a built products folder)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
# The peers and the tools the figures need (bench only: not in the test command's dependencies).
for p in gocryptfs rclone bc; do dpkg -s "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null; done
SIZE=${1:-1G}
NODES=${2:-100000}
if [ -z "${VAULT_BENCH_BIN:-}" ]; then
  swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  swift build -c release --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
fi
BIN=${VAULT_BENCH_BIN:-$(swift build -c release --show-bin-path)}
TMP=$(mktemp -d /tmp/vault-bench-mount.XXXXXX)
MOUNTS=()
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  for m in "${MOUNTS[@]}"; do fusermount3 -uz "$m" 2>/dev/null || true; done
  sleep 0.5
  rm -rf "$TMP"
}
trap cleanup EXIT
export NO_COLOR=1 VAULT_NO_KEYRING=1 VAULT_HOME="$TMP/vault" TMPDIR="$TMP"
printf 'bench password\n' > "$TMP/pw"
bytes=$(numfmt --from=iec "$SIZE")

now() { date +%s.%N; }
drop_caches() { [ "$(id -u)" = 0 ] && { sync; echo 3 > /proc/sys/vm/drop_caches; } || true; }
# seconds for: cat FILE > /dev/null
read_s() { local t0; t0=$(now); cat "$1" > /dev/null; echo "$(now) - $t0" | bc -l; }
# seconds for: write SIZE bytes to FILE and fsync it
write_s() { local t0; t0=$(now); head -c "$bytes" /dev/zero | dd of="$1" bs=1M conv=fsync status=none; echo "$(now) - $t0" | bc -l; }
lsr_s() { local t0; t0=$(now); ls -lR "$1" > /dev/null; echo "$(now) - $t0" | bc -l; }
rate() { echo "scale=0; $bytes / $1 / 1000000" | bc -l; }

# The local source: one SIZE file of random bytes and a tree of NODES files in folders of 100.
head -c "$bytes" /dev/urandom > "$TMP/big"
python3 - "$TMP/tree" "$NODES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%d" % (i // 100))
    if i % 100 == 0: os.makedirs(d)
    open(os.path.join(d, "f%d" % i), "w").close()
EOF

declare -A R
# --- vault
"$BIN/vault" init --password-file "$TMP/pw" --kdf-ops 1 --kdf-mem 8M > /dev/null
"$BIN/vault" put "$TMP/big" /big --password-file "$TMP/pw" > /dev/null
"$BIN/vault" put -r "$TMP/tree" / --password-file "$TMP/pw" > /dev/null
mkdir "$TMP/mnt-vault"
"$BIN/vault" mount "$TMP/mnt-vault" --password-file "$TMP/pw" > /dev/null
MOUNTS+=("$TMP/mnt-vault")
drop_caches
R[vault,read]=$(read_s "$TMP/mnt-vault/big"); R[vault,reread]=$(read_s "$TMP/mnt-vault/big")
R[vault,lsr]=$(lsr_s "$TMP/mnt-vault/tree")
R[vault,lsr2]=$(lsr_s "$TMP/mnt-vault/tree")
"$BIN/vault" mv /tree/d0/f0 /tree/d0/moved --password-file "$TMP/pw" > /dev/null
t0=$(now); for _ in $(seq 1000); do [ -e "$TMP/mnt-vault/tree/d0/f0" ] || break; sleep 0.01; done
R[vault,seen]=$(echo "$(now) - $t0" | bc -l)
R[vault,check]=$(sed -n 's/.*checking \([0-9]*\) inodes after a change beside the mount took \([0-9]*\) ms.*/\1 inodes in \2 ms/p' "$TMP/vault/mount.log" | tail -n 1)

# --- on demand: a second vault, its SIZE file synced to a loopback server and evicted
printf 'bench server password\n' > "$TMP/spw"
"$BIN/vault-server" user add bench --data "$TMP/server" --password-file "$TMP/spw" > /dev/null
"$BIN/vault-server" serve --data "$TMP/server" --listen 127.0.0.1:0 > "$TMP/server.out" 2> "$TMP/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q listening "$TMP/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/server.out")
od() { VAULT_HOME="$TMP/vault-od" "$BIN/vault" "$@" --password-file "$TMP/pw" > /dev/null; }
od init --kdf-ops 1 --kdf-mem 8M
od login --server "http://127.0.0.1:$port" --user bench --server-password-file "$TMP/spw"
od put "$TMP/big" /big
od sync
od evict /big
mkdir "$TMP/mnt-od"
od mount "$TMP/mnt-od"
MOUNTS+=("$TMP/mnt-od")
mark=$(wc -l < "$TMP/server.log")
R[vault,od_ms]=$(python3 -c '
import os, sys, time
t = time.time()
fd = os.open(sys.argv[1], os.O_RDONLY)   # the open reads the content record from the server
assert len(os.pread(fd, 4096, int(sys.argv[2]))) == 4096
print(round((time.time() - t) * 1000))' "$TMP/mnt-od/big" "$((bytes / 2))")
R[vault,od_bytes]=$(tail -n +"$((mark + 1))" "$TMP/server.log" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
print(sum(r.get("bytesOut", 0) for r in rows if r.get("method") == "GET" and r.get("path", "").endswith("/content")))')
fusermount3 -u "$TMP/mnt-od"

# --- gocryptfs
if command -v gocryptfs > /dev/null; then
  mkdir "$TMP/gc-cipher" "$TMP/mnt-gc"
  gocryptfs -q -init -scryptn 10 -passfile "$TMP/pw" "$TMP/gc-cipher"
  gocryptfs -q -passfile "$TMP/pw" "$TMP/gc-cipher" "$TMP/mnt-gc"
  MOUNTS+=("$TMP/mnt-gc")
  cp "$TMP/big" "$TMP/mnt-gc/big"; cp -r "$TMP/tree" "$TMP/mnt-gc/tree"
  drop_caches
  R[gc,read]=$(read_s "$TMP/mnt-gc/big"); R[gc,reread]=$(read_s "$TMP/mnt-gc/big")
  R[gc,lsr]=$(lsr_s "$TMP/mnt-gc/tree")
  R[gc,lsr2]=$(lsr_s "$TMP/mnt-gc/tree")
fi

# --- sequential write: vault and gocryptfs in turn, the median of each
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
vw=(); gw=()
for r in $(seq "${WRITE_ROUNDS:-3}"); do
  vw+=("$(write_s "$TMP/mnt-vault/written-$r")"); rm -f "$TMP/mnt-vault/written-$r"
  if [ -d "$TMP/mnt-gc" ]; then gw+=("$(write_s "$TMP/mnt-gc/written-$r")"); rm -f "$TMP/mnt-gc/written-$r"; fi
done
R[vault,write]=$(printf '%s\n' "${vw[@]}" | median)
[ "${#gw[@]}" -gt 0 ] && R[gc,write]=$(printf '%s\n' "${gw[@]}" | median)
write_rounds() { local out="" t; for t in "$@"; do out+="$(rate "$t") "; done; echo "${out% }"; }
pid=$(pgrep -o -f "mount $TMP/mnt-vault" || true)
R[vault,rss]=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status" 2>/dev/null || echo "?")

# --- rclone crypt over a local folder
if command -v rclone > /dev/null; then
  mkdir "$TMP/rc-cipher" "$TMP/mnt-rc"
  export RCLONE_CONFIG_BENCH_TYPE=crypt RCLONE_CONFIG_BENCH_REMOTE="$TMP/rc-cipher"
  RCLONE_CONFIG_BENCH_PASSWORD=$(rclone obscure "bench password"); export RCLONE_CONFIG_BENCH_PASSWORD
  rclone copy "$TMP/tree" bench:tree; rclone copyto "$TMP/big" bench:big
  rclone mount bench: "$TMP/mnt-rc" --daemon --vfs-cache-mode writes --cache-dir "$TMP/rc-cache"
  MOUNTS+=("$TMP/mnt-rc")
  for _ in $(seq 50); do [ -e "$TMP/mnt-rc/big" ] && break; sleep 0.1; done
  drop_caches
  R[rc,read]=$(read_s "$TMP/mnt-rc/big"); R[rc,reread]=$(read_s "$TMP/mnt-rc/big")
  R[rc,write]=$(write_s "$TMP/mnt-rc/written")
  R[rc,lsr]=$(lsr_s "$TMP/mnt-rc/tree")
  R[rc,lsr2]=$(lsr_s "$TMP/mnt-rc/tree")
fi

printf '\n%-34s %12s %12s %12s\n' "$SIZE file, $NODES nodes" "vault" "gocryptfs" "rclone"
row() {   # label key unit-converter
  local v g r
  v=$($3 "${R[vault,$2]:-}"); g=$($3 "${R[gc,$2]:-}"); r=$($3 "${R[rc,$2]:-}")
  printf '%-34s %12s %12s %12s\n' "$1" "$v" "$g" "$r"
}
mbps() { [ -n "$1" ] && echo "$(rate "$1") MB/s" || echo "—"; }
secs() { [ -n "$1" ] && printf '%.2f s' "$1" || echo "—"; }
row "sequential read (cold)" read mbps
row "sequential read (again)" reread mbps
row "sequential write + fsync" write mbps
row "ls -lR" lsr secs
row "ls -lR (again)" lsr2 secs
printf '%-34s %s\n' "  each write round (MB/s)" "vault: $(write_rounds "${vw[@]}"); gocryptfs: $(write_rounds "${gw[@]}")"
printf '%-34s %s\n' "a change beside it seen after" "$(secs "${R[vault,seen]}") (its check: ${R[vault,check]:-under 100 ms})"
printf '%-34s %12s\n' "peak RSS of the mount" "${R[vault,rss]} MiB"
printf '%-34s %s\n' "4 KiB at SIZE/2, not downloaded" "$(echo "scale=1; ${R[vault,od_bytes]} / 1024" | bc -l) KiB fetched, open + read ${R[vault,od_ms]} ms (target <= 1024 KiB, <= 200 ms)"
echo
echo "second read / first: $(echo "scale=1; ${R[vault,read]} / ${R[vault,reread]}" | bc -l)x"
[ -n "${R[gc,read]:-}" ] && echo "read vs gocryptfs: $(echo "scale=2; ${R[gc,read]} / ${R[vault,read]}" | bc -l)x; write vs gocryptfs: $(echo "scale=2; ${R[gc,write]} / ${R[vault,write]}" | bc -l)x"
[ -n "${R[rc,lsr]:-}" ] && echo "ls -lR vs rclone: $(echo "scale=2; ${R[rc,lsr]} / ${R[vault,lsr]}" | bc -l)x"
command -v gocryptfs > /dev/null && command -v rclone > /dev/null || echo "(peers missing: apt-get install gocryptfs rclone)"
