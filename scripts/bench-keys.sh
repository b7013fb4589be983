#!/usr/bin/env bash
# Key-management benchmarks (BRIEF §11, issue 5):
#  1. `vault key rotate` on a vault of N files (default 100,000; target <= 10 s)
#  2. unlock time at each calibrated KDF setting (Argon2id and PBKDF2 for 0.25 / 0.5 / 1 s targets)
#  3. unlock through a TPM2 keyslot (swtpm), with and without a PIN, vs the password (issue 20)
#  4. unlock through a FIDO2 keyslot (the test authenticator scripts/soft-fido2.py; the debug
#     build, the only one that honours VAULT_TEST_FIDO2_SOCKET) vs a command that unlocks nothing
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

echo
echo "== 3. TPM2 keyslot unlock (a real TPM 2.0: swtpm on a socket) vs the password at the default calibration"
if ! command -v swtpm > /dev/null; then
  echo "swtpm is not installed: skipped"
else
  TPMDIR="$OUT/swtpm"; mkdir -p "$TPMDIR/state"
  swtpm socket --tpm2 --tpmstate dir="$TPMDIR/state" --server type=unixio,path="$TPMDIR/s" \
    --ctrl type=unixio,path="$TPMDIR/s.ctrl" --flags not-need-init,startup-clear > /dev/null 2>&1 &
  SWTPM_PID=$!
  trap 'kill "$SWTPM_PID" 2>/dev/null || true; rm -rf "$OUT"' EXIT
  for _ in $(seq 100); do [ -S "$TPMDIR/s" ] && break; sleep 0.1; done
  export VAULT_TPM_TCTI="swtpm:path=$TPMDIR/s"
  printf '2468\n' > "$OUT/pin"
  median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  # One unlock, whole process, with no terminal (setsid): prints its seconds.
  timed() { local s e; s=$(date +%s.%N); setsid -w "$BIN/vault" unlock "$@" > /dev/null 2>&1 || echo "unlock failed" >&2; e=$(date +%s.%N); secs "$s" "$e"; }
  rm -rf "$VAULT_HOME"
  P=$("$BIN/vault" init --password-file "$OUT/pw" 2>/dev/null | sed -n 's/.*(KDF \(.*\)).*/\1/p')
  PW=$(for _ in 1 2 3 4 5; do timed --password-file "$OUT/pw"; done | median)
  "$BIN/vault" key add-tpm --password-file "$OUT/pw" > /dev/null 2>&1
  TPM=$(for _ in 1 2 3 4 5; do timed; done | median)
  rm -rf "$VAULT_HOME"
  "$BIN/vault" init --password-file "$OUT/pw" > /dev/null 2>&1
  "$BIN/vault" key add-tpm --pin-file "$OUT/pin" --password-file "$OUT/pw" > /dev/null 2>&1
  TPMPIN=$(for _ in 1 2 3 4 5; do timed --pin-file "$OUT/pin"; done | median)
  kill "$SWTPM_PID" 2>/dev/null || true
  ratio() { python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$1" "$2"; }
  echo "password unlock (Argon2id, default calibration: $P), whole process, median of 5: ${PW} s"
  echo "TPM2 slot unlock, no PIN, whole process, median of 5: ${TPM} s (target <= 0.150 s; ratio to the password $(ratio "$TPM" "$PW"), target <= 1)"
  echo "TPM2 slot unlock with a PIN, whole process, median of 5: ${TPMPIN} s (ratio to the password $(ratio "$TPMPIN" "$PW"))"
  echo "(whole-process times include starting vault and opening the vault folder: an upper bound of the in-process unlock)"
fi

echo
echo "== 4. FIDO2 keyslot unlock (the test authenticator, debug build) vs a vault process that unlocks nothing"
if ! /usr/bin/python3 -c "import fido2.cbor, cryptography" 2> /dev/null; then
  echo "python3-fido2 is not installed: skipped"
else
  swift build --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  DBIN=$(swift build --show-bin-path)
  F2DIR="$OUT/fido2"; mkdir -p "$F2DIR"
  /usr/bin/python3 scripts/soft-fido2.py --socket "$F2DIR/s" --state "$F2DIR/state.json" > /dev/null 2>&1 &
  F2_PID=$!
  trap 'kill "$F2_PID" 2>/dev/null || true; rm -rf "$OUT"' EXIT
  for _ in $(seq 100); do [ -S "$F2DIR/s" ] && break; sleep 0.1; done
  export VAULT_TEST_FIDO2_SOCKET="$F2DIR/s"
  median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  run_timed() { local s e; s=$(date +%s.%N); setsid -w "$DBIN/vault" "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N); secs "$s" "$e"; }
  rm -rf "$VAULT_HOME"
  "$DBIN/vault" init --password-file "$OUT/pw" > /dev/null 2>&1
  "$DBIN/vault" key add-fido2 --password-file "$OUT/pw" > /dev/null 2>&1
  F2=$(for _ in 1 2 3 4 5; do run_timed unlock; done | median)
  BASE=$(for _ in 1 2 3 4 5; do run_timed status; done | median)
  kill "$F2_PID" 2>/dev/null || true
  echo "FIDO2 slot unlock (touch approved), whole process, median of 5: ${F2} s; vault status (no unlock), median of 5: ${BASE} s"
  echo "(the difference bounds the FIDO2 part, authenticator included: target <= 0.050 s of vault time)"
fi
