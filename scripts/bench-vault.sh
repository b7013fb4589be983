#!/usr/bin/env bash
# Benchmarks of the vault core (BRIEF §11), each side by side with its reference in one run:
#  1. seal / unseal throughput of 1 GiB on one core  vs  `openssl speed -evp aes-256-gcm` at the same block size
#  2. `vault put` of a 2 GiB file  vs  a raw write of the same bytes to the same disk (dd, fsync)  and  vs `age`
#  3. peak RSS of each (GNU time)
# Usage: scripts/bench-vault.sh [SIZE_MIB=2048]   (BENCH_DIR=… to choose the disk; default ./bench-out; BENCH_BIN=DIR, the release binaries of another build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
for p in time; do dpkg -s "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; done
SIZE_MIB=${1:-2048}
swift build -c release --product vault --product vault-bench 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
BIN=${BENCH_BIN:-$(swift build -c release --show-bin-path)}   # BENCH_BIN: another build's vault and vault-bench (a before/after)
OUT=${BENCH_DIR:-$(pwd)/bench-out}
rm -rf "$OUT"; mkdir -p "$OUT"; trap 'rm -rf "$OUT"' EXIT
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b*100:.1f} %')" "$1" "$2"; }
rss() { grep -E "Maximum resident" "$1" | awk '{printf "%.1f MiB", $6/1024}'; }

echo "== 1. seal/unseal, 1 GiB, 64 KiB segments, one core"
OPENSSL_KBPS=$(taskset -c 0 openssl speed -evp aes-256-gcm -bytes 65536 -seconds 3 2>/dev/null | awk '/^AES-256-GCM/ {print $2}' | tr -d k)
OPENSSL_MBPS=$(python3 -c "print(${OPENSSL_KBPS}*1000/1e6)")
/usr/bin/time -v -o "$OUT/seal.time" taskset -c 0 "$BIN/vault-bench" 1024 65536 > "$OUT/seal.json"
SEAL=$(python3 -c "import json;print([json.loads(l)['MBps'] for l in open('$OUT/seal.json') if '\"seal\"' in l][0])")
UNSEAL=$(python3 -c "import json;print([json.loads(l)['MBps'] for l in open('$OUT/seal.json') if '\"unseal\"' in l][0])")
printf '%-34s %10.0f MB/s\n' "openssl speed aes-256-gcm 64 KiB" "$OPENSSL_MBPS"
printf '%-34s %10.0f MB/s   ratio %s (target >= 90 %%)\n' "vault seal (to memory)" "$SEAL" "$(ratio "$SEAL" "$OPENSSL_MBPS")"
printf '%-34s %10.0f MB/s   ratio %s (target >= 90 %%)\n' "vault unseal (from memory)" "$UNSEAL" "$(ratio "$UNSEAL" "$OPENSSL_MBPS")"
UNSEAL_FILE=$(python3 -c "import json;print([json.loads(l)['MBps'] for l in open('$OUT/seal.json') if '\"unseal-from-file\"' in l][0])")
printf '%-34s %10.0f MB/s   (pread from the page cache: a kernel copy per byte on top)\n' "vault unseal (from a file)" "$UNSEAL_FILE"
echo "peak RSS of vault-bench: $(rss "$OUT/seal.time")"

echo
echo "== 2. a ${SIZE_MIB} MiB file on $(df -h "$OUT" | awk 'NR==2 {print $1}')"
openssl enc -aes-128-ctr -pass pass:bench -nosalt -pbkdf2 < <(head -c $((SIZE_MIB << 20)) /dev/zero) > "$OUT/src.bin" 2>/dev/null
cat "$OUT/src.bin" > /dev/null   # warm the page cache: every contender reads the source from memory
export VAULT_HOME="$OUT/vault" VAULT_NO_KEYRING=1
printf 'bench password\n' > "$OUT/pw"
"$BIN/vault" init --password-file "$OUT/pw" --kdf-ops 1 --kdf-mem 8M > /dev/null 2>&1
# t CMD…: runs CMD (its output discarded) and prints the elapsed seconds.
t() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); python3 -c "print($e-$s)"; }
sync
RAW=$(t /usr/bin/time -v -o "$OUT/dd.time" dd if="$OUT/src.bin" of="$OUT/raw.bin" bs=1M conv=fsync status=none)
rm -f "$OUT/raw.bin"; sync
PUT=$(t /usr/bin/time -v -o "$OUT/put.time" "$BIN/vault" put "$OUT/src.bin" /src.bin --password-file "$OUT/pw")
sync
age-keygen -o "$OUT/age.key" 2>/dev/null
AGE=$(t /usr/bin/time -v -o "$OUT/age.time" bash -c "age -r \$(age-keygen -y '$OUT/age.key') -o '$OUT/age.out' '$OUT/src.bin' && sync -f '$OUT/age.out'")
rm -f "$OUT/age.out"
mbs() { python3 -c "print(f'{$SIZE_MIB*1048576/$1/1e6:.0f}')"; }
printf '%-34s %8s MB/s  %6.2f s  peak RSS %s\n' "raw write (dd, fsync)" "$(mbs "$RAW")" "$RAW" "$(rss "$OUT/dd.time")"
printf '%-34s %8s MB/s  %6.2f s  peak RSS %s\n' "vault put (seal + fsync)" "$(mbs "$PUT")" "$PUT" "$(rss "$OUT/put.time")"
printf '%-34s %8s MB/s  %6.2f s  peak RSS %s\n' "age -r (X25519, fsync)" "$(mbs "$AGE")" "$AGE" "$(rss "$OUT/age.time")"
echo "vault put vs raw write: $(ratio "$RAW" "$PUT") of raw speed (target >= 90 %)"
echo "vault put vs age:       $(python3 -c "print(f'{$AGE/$PUT:.2f}x')") as fast (target > 1x)"
echo "vault put peak RSS:     $(rss "$OUT/put.time") (target <= 64 MiB)"
