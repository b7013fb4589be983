#!/usr/bin/env bash
# Key-management benchmarks (BRIEF §11, issue 5):
#  1. `vault key rotate` on a vault of N files (default 100,000; target <= 10 s)
#  2. unlock time at each calibrated KDF setting (Argon2id and PBKDF2 for 0.25 / 0.5 / 1 s targets)
# Usage: scripts/bench-keys.sh [FILES=100000]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
N=${1:-100000}
swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
BIN=$(swift build -c release --show-bin-path)
OUT=${BENCH_DIR:-$(pwd)/bench-out}/keys
rm -rf "$OUT"; mkdir -p "$OUT/src"; trap 'rm -rf "$OUT"' EXIT
export VAULT_HOME="$OUT/vault" VAULT_NO_KEYRING=1
printf 'bench password\n' > "$OUT/pw"
secs() { python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.2f}')" "$1" "$2"; }

echo "== 1. master-key rotation of a ${N}-file vault"
python3 - "$OUT/src" "$N" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 1000:03d}")
    if i % 1000 == 0: os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:06d}.txt"), "wb") as f: f.write(b"file %d\n" % i)
PY
"$BIN/vault" init --password-file "$OUT/pw" --kdf-ops 2 --kdf-mem 64M > /dev/null 2>&1
s=$(date +%s.%N); "$BIN/vault" put -r "$OUT/src" /data --password-file "$OUT/pw" 2>/dev/null; e=$(date +%s.%N)
echo "import of $N files: $(secs "$s" "$e") s"
s=$(date +%s.%N); "$BIN/vault" key rotate --password-file "$OUT/pw" 2>/dev/null; e=$(date +%s.%N)
ROT=$(secs "$s" "$e")
echo "vault key rotate: ${ROT} s for ${N} files (target <= 10 s)"
"$BIN/vault" cat /data/d050/f050000.txt --password-file "$OUT/pw" 2>/dev/null | grep -q "file 50000" && echo "content verified after rotation"

echo
echo "== 2. unlock time at calibrated KDF settings"
printf '%-10s %-8s %-34s %s\n' "kdf" "target" "parameters" "vault unlock (s)"
for kdf in argon2id pbkdf2; do
  for t in 0.25 0.5 1; do
    rm -rf "$VAULT_HOME"
    P=$("$BIN/vault" init --kdf "$kdf" --kdf-time "$t" --password-file "$OUT/pw" 2>/dev/null | sed -n 's/.*(KDF \(.*\)).*/\1/p')
    s=$(date +%s.%N); "$BIN/vault" unlock --password-file "$OUT/pw" > /dev/null 2>&1; e=$(date +%s.%N)
    printf '%-10s %-8s %-34s %s\n' "$kdf" "${t}s" "$P" "$(secs "$s" "$e")"
  done
done
