#!/usr/bin/env bash
# Proves SECURITY.md's promise: an independent program (scripts/independent-decrypt.py, Python,
# no vault code) decrypts a vault from its password alone, byte for byte.
#
#   scripts/check-independent-decrypt.sh            # builds vault into .build-docs, then checks
#   VAULT_BIN=/path/to/vault scripts/check-independent-decrypt.sh
#
# Two vaults (Argon2id and PBKDF2), files at the segment edges, unicode names in nested folders;
# plus: sqlite3 cannot read metadata.db, sqlcipher with the documented raw key can; a wrong
# password, a flipped byte, a truncated, extended or swapped blob are refused; a recovery key
# (its padding bits ignored, a typo refused); vaults killed in the middle of a key rotation, and
# after it; a password in two Unicode forms. Ends with
# "N passed, M failed" and exits non-zero when M > 0. Idempotent; removes its temp folders.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DECRYPT="$ROOT/scripts/independent-decrypt.py"
# shellcheck source=lib/tally.sh
. "$ROOT/scripts/lib/tally.sh"

# --- tools ------------------------------------------------------------------------------------
if [ -z "${VAULT_BIN:-}" ]; then
  export PATH=/opt/swift/usr/bin:$PATH
  echo "building vault (scratch path $ROOT/.build-docs)..."
  (cd "$ROOT" && swift build --scratch-path "$ROOT/.build-docs" --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 2)
  VAULT_BIN="$(cd "$ROOT" && swift build --scratch-path "$ROOT/.build-docs" --product vault --show-bin-path)/vault"
fi
[ -x "$VAULT_BIN" ] || { echo "error: no vault binary at $VAULT_BIN" >&2; exit 2; }
if ! python3 -c "import cryptography, argon2" 2>/dev/null; then
  python3 -m pip install --quiet cryptography argon2-cffi 2>&1 | grep -v "WARNING: Running pip as the 'root'" || true
fi
if ! command -v sqlite3 >/dev/null || ! command -v sqlcipher >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq sqlite3 sqlcipher >/dev/null
fi

WORK=$(mktemp -d /tmp/vault-indep.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 700 "$WORK"
export VAULT_NO_KEYRING=1
unset VAULT_PASSWORD_COMMAND XDG_DATA_HOME XDG_CONFIG_HOME || true

# --- originals --------------------------------------------------------------------------------
SRC="$WORK/src"; mkdir -p "$SRC"
: > "$SRC/empty"
printf 'x' > "$SRC/one-byte"
head -c 65536  /dev/urandom > "$SRC/seg-exact-65536"
head -c 65537  /dev/urandom > "$SRC/seg-plus-one-65537"
head -c 131072 /dev/urandom > "$SRC/two-segments-131072"
head -c 1048579 /dev/urandom > "$SRC/random-1MB"
UNI="Grüße – 日本語 ✓.txt"
printf 'MARKER-5f0c1e-plaintext-must-not-appear-at-rest\n' > "$SRC/$UNI"
# vault destination of each original
declare -A DEST=(
  [empty]="/empty"
  [one-byte]="/docs/one-byte"
  [seg-exact-65536]="/docs/deep/nested/seg-exact-65536"
  [seg-plus-one-65537]="/docs/deep/nested/seg-plus-one-65537"
  [two-segments-131072]="/photos/2024/two-segments-131072"
  [random-1MB]="/photos/2024/Été/random-1MB"
  ["$UNI"]="/docs/deep/nested/$UNI"
)

run_vault() { # HOME PWFILE ARGS...
  local home=$1 pw=$2; shift 2
  VAULT_HOME="$home" "$VAULT_BIN" "$@" --password-file "$pw" 2>>"$WORK/vault-stderr.log"
}

check_vault() { # LABEL INIT-ARGS...
  local label=$1; shift
  local home="$WORK/$label/home" pw="$WORK/$label/password" out="$WORK/$label/out"
  mkdir -p "$WORK/$label"
  printf 'correct horse battery staple %s ünï\n' "$label" > "$pw"
  echo "== $label vault: vault init $* =="
  check "$label: vault init $*" run_vault "$home" "$pw" init "$@"
  run_vault "$home" "$pw" mkdir -p /docs/deep/nested >/dev/null
  run_vault "$home" "$pw" mkdir -p "/photos/2024/Été" >/dev/null
  local f
  for f in "${!DEST[@]}"; do
    run_vault "$home" "$pw" put "$SRC/$f" "${DEST[$f]}" >/dev/null || bad "$label: vault put $f"
  done

  # Files 0600, folders 0700, nothing for group or others.
  local loose
  loose=$(find "$home" \( -type f ! -perm 600 \) -o \( -type d ! -perm 700 \) 2>/dev/null | head -n 3)
  if [ -z "$loose" ]; then ok "$label: every file is 0600 and every folder 0700"; else bad "$label: loose permissions: $loose"; fi
  if grep -rqa "MARKER-5f0c1e" "$home"; then bad "$label: plaintext marker found under the vault folder"
  else ok "$label: no plaintext marker anywhere under the vault folder"; fi

  # The independent decryption: only the vault folder and the password.
  local log="$WORK/$label/decrypt.log"
  if python3 "$DECRYPT" "$home" --password-file "$pw" --out "$out" --check-db-pages --print-db-key >"$log" 2>&1; then
    ok "$label: independent-decrypt.py unlocked, listed and decrypted the vault"
  else
    bad "$label: independent-decrypt.py failed:"; sed 's/^/    /' "$log"
  fi
  grep -v "^database key:" "$log" | sed 's/^/    /'
  for f in "${!DEST[@]}"; do
    if cmp -s "$SRC/$f" "$out${DEST[$f]}"; then ok "$label: ${DEST[$f]} ($(stat -c %s "$SRC/$f") bytes) identical"
    else bad "$label: ${DEST[$f]} differs or is missing"; fi
  done
  local n; n=$(find "$out" -type f | wc -l)
  if [ "$n" -eq "${#DEST[@]}" ]; then ok "$label: exactly ${#DEST[@]} files decrypted"; else bad "$label: $n files decrypted, expected ${#DEST[@]}"; fi
  check "$label: vault cat agrees with the original (random-1MB)" \
    bash -c 'cmp -s <(VAULT_HOME="$1" "$2" cat "$3" --password-file "$4" 2>/dev/null) "$5"' _ \
    "$home" "$VAULT_BIN" "${DEST[random-1MB]}" "$pw" "$SRC/random-1MB"

  # The database: opaque to sqlite3, open to sqlcipher with the documented raw key.
  local key; key=$(sed -n 's/^database key: \([0-9a-f]\{64\}\)$/\1/p' "$log")
  refuse "$label: sqlite3 cannot read metadata.db" \
    sqlite3 -batch "$home/metadata.db" "SELECT count(*) FROM sqlite_master;"
  refuse "$label: sqlcipher without a key cannot read metadata.db" \
    sqlcipher -batch "$home/metadata.db" "SELECT count(*) FROM sqlite_master;"
  local count
  count=$(printf "PRAGMA key = \"x'%s'\";\nSELECT count(*) FROM nodes WHERE folder = 0;\n" "$key" \
          | sqlcipher -batch -init /dev/null "$home/metadata.db" 2>/dev/null || true)
  if [ "$count" = "${#DEST[@]}" ]; then ok "$label: sqlcipher with PRAGMA key = \"x'<database key>'\" reads nodes ($count files)"
  else bad "$label: sqlcipher with the documented key: got '$count'"; fi

  # Refusals, each on a fresh copy of the vault.
  refuse "$label: wrong password refused" python3 "$DECRYPT" "$home" --password-stdin <<<"not the password"
  # Each: what, how, and the exit code `vault` itself must give on the same damage (6 integrity,
  # 3 wrong password; "any" = refused with some non-zero code: today vault reports a damaged
  # database page found after open as exit 1, "database error 11").
  local big="${DEST[random-1MB]}"
  tamper "$label" "$home" "$pw" "flipped byte in the last segment" flip_tail 6 cat "$big"
  tamper "$label" "$home" "$pw" "blob truncated at a segment boundary" truncate_segment 6 cat "$big"
  tamper "$label" "$home" "$pw" "blob extended by one byte" extend 6 cat "$big"
  tamper "$label" "$home" "$pw" "blob cut to 128 bytes (header + 16)" cut_to_128 6 cat "$big"
  tamper "$label" "$home" "$pw" "flipped byte in the tag of an empty file's empty final segment" flip_empty_tag 6 cat "${DEST[empty]}"
  tamper "$label" "$home" "$pw" "two blob files swapped" swap 6 cat "$big"
  tamper "$label" "$home" "$pw" "keyEpoch in a blob header changed" bump_epoch 6 cat "$big"
  tamper "$label" "$home" "$pw" "keyslot KDF parameter changed (sha256 line refreshed)" edit_keyslot 3 ls /
  tamper "$label" "$home" "$pw" "keyslot createdAt changed (sha256 line refreshed)" edit_keyslot_date 6 ls /
  # The nodes table's root page (schema 9 made a new table: its page is not page 2 any more).
  NODES_PAGE=$(printf "PRAGMA key = \"x'%s'\";\nSELECT rootpage FROM sqlite_master WHERE name = 'nodes';\n" "$key" \
               | sqlcipher -batch -init /dev/null "$home/metadata.db" 2>/dev/null || true)
  [ -n "$NODES_PAGE" ] || { bad "$label: no root page of the nodes table"; NODES_PAGE=2; }
  tamper "$label" "$home" "$pw" "flipped byte in metadata.db page $NODES_PAGE (the nodes table's root)" flip_db any ls /

  # Permissions: a group-writable keyslot file makes vault refuse (exit 9, insecure).
  local copy="$WORK/$label/loose"; rm -rf "$copy"; cp -a "$home" "$copy"; chmod g+w "$copy/keyslots"
  local rc=0; VAULT_HOME="$copy" "$VAULT_BIN" ls / --password-file "$pw" >/dev/null 2>&1 || rc=$?
  if [ "$rc" -eq 9 ]; then ok "$label: vault refuses a group-writable keyslot file (exit 9)"
  else bad "$label: group-writable keyslot file: vault exit $rc, expected 9"; fi
  rm -rf "$copy"
}

largest_blob() { find "$1/staging" "$1/cache" -name '*.blob' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2; }
# flip_at FILE OFFSET: inverts every bit of one byte (writing a constant would change nothing when
# the byte already had that value, 1 time in 256).
flip_at() { python3 -c 'import sys
p, o = sys.argv[1], int(sys.argv[2])
with open(p, "r+b") as f:
    f.seek(o); b = f.read(1); f.seek(o); f.write(bytes([b[0] ^ 0xFF]))' "$1" "$2"; }
flip_tail() { local b; b=$(largest_blob "$1"); flip_at "$b" $(( $(stat -c %s "$b") - 5 )); }
truncate_segment() { local b; b=$(largest_blob "$1"); truncate -s $((112 + 65552)) "$b"; }
extend() { local b; b=$(largest_blob "$1"); printf 'z' >> "$b"; }
cut_to_128() { local b; b=$(largest_blob "$1"); truncate -s 128 "$b"; }
flip_empty_tag() { local b; b=$(find "$1/staging" "$1/cache" -name '*.blob' -size 128c | head -n 1); flip_at "$b" 120; }
swap() { local a b; a=$(largest_blob "$1"); b=$(find "$1/staging" -name '*.blob' -size -2k | head -n 1)
         mv "$a" "$1/x"; mv "$b" "$a"; mv "$1/x" "$b"; }
bump_epoch() { local b; b=$(largest_blob "$1"); printf '\x00\x00\x00\x07' | dd of="$b" bs=1 seek=48 conv=notrunc status=none; }
edit_keyslot() { rewrite_keyslot "$1" kdf; }
edit_keyslot_date() { rewrite_keyslot "$1" date; }
rewrite_keyslot() { # HOME kdf|date: edits the body and recomputes the (unkeyed) sha256 line
  python3 - "$1/keyslots" "$2" <<'EOF'
import hashlib, json, sys
p = sys.argv[1]; lines = open(p, "rb").read().split(b"\n")
d = json.loads(lines[0]); k = d["slots"][0]["kdf"]
if sys.argv[2] == "date": d["slots"][0]["createdAt"] -= 1
elif "opsLimit" in k: k["opsLimit"] += 1
else: k["iterations"] += 1
body = json.dumps(d, separators=(",", ":"), sort_keys=True).encode()
lines[0] = body
if lines[1].startswith(b"sha256:"): lines[1] = b"sha256:" + hashlib.sha256(body).hexdigest().encode()
open(p, "wb").write(b"\n".join(lines))
EOF
}
flip_db() { flip_at "$1/metadata.db" $(((NODES_PAGE - 1) * 1024 + 100)); }

tamper() { # LABEL HOME PW WHAT FUNCTION EXPECTED-VAULT-EXIT VAULT-ARGS...
  local label=$1 home=$2 pw=$3 what=$4 fn=$5 want=$6 copy="$WORK/$label/tampered"; shift 6
  rm -rf "$copy" "$copy.out"; cp -a "$home" "$copy"
  "$fn" "$copy"
  if python3 "$DECRYPT" "$copy" --password-file "$pw" --out "$copy.out" --check-db-pages >"$copy.log" 2>&1; then
    bad "$label: $what was NOT detected by independent-decrypt.py"
  else
    ok "$label: $what detected: $(grep -o 'FAILED: .*' "$copy.log" | cut -c 9-150)"
  fi
  local rc=0; VAULT_HOME="$copy" "$VAULT_BIN" "$@" --password-file "$pw" >/dev/null 2>>"$copy.vault.log" || rc=$?
  if [ "$rc" = "$want" ] || { [ "$want" = any ] && [ "$rc" -ne 0 ]; }; then ok "$label: $what: vault $* refuses too (exit $rc)"
  else bad "$label: $what: vault $* exit $rc, expected $want: $(tail -n 2 "$copy.vault.log" | tr '\n' ' ')"; fi
  rm -rf "$copy" "$copy.out" "$copy.log" "$copy.vault.log"
}

check_vault argon2id --kdf-ops 1 --kdf-mem 8M
check_vault pbkdf2 --kdf pbkdf2 --pbkdf2-iterations 2000

# The recovery key (SECURITY.md "Recovery key encoding"): the decryptor opens the vault with it
# (a recovery slot's AAD ends in "|"), typed in lower case with spaces, and with its 3 padding
# bits set (readers ignore them); vault agrees; a mistyped character is refused by both.
echo "== recovery key =="
RK_DIR="$WORK/recovery"; RK_HOME="$RK_DIR/home"; mkdir -p "$RK_DIR"
printf 'recovery vault password\n' > "$RK_DIR/pw"
run_vault "$RK_HOME" "$RK_DIR/pw" init --kdf-ops 1 --kdf-mem 8M >/dev/null
run_vault "$RK_HOME" "$RK_DIR/pw" put "$SRC/random-1MB" /r >/dev/null
run_vault "$RK_HOME" "$RK_DIR/pw" key add-recovery --json \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["recoveryKey"])' > "$RK_DIR/key"
python3 - "$RK_DIR" <<'EOF2'
import sys
d = sys.argv[1]; key = open(d + "/key").read().strip(); A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
open(d + "/key-typed", "w").write(key.lower().replace("-", " ") + "\n")
open(d + "/key-padding", "w").write(key[:-1] + A[A.index(key[-1]) | 7] + "\n")    # the 3 padding bits set
i = 3; open(d + "/key-typo", "w").write(key[:i] + ("B" if key[i] == "A" else "A") + key[i + 1:] + "\n")
EOF2
for form in key key-typed key-padding; do
  rm -rf "$RK_DIR/out"
  if python3 "$DECRYPT" "$RK_HOME" --recovery-key-file "$RK_DIR/$form" --out "$RK_DIR/out" >"$RK_DIR/log" 2>&1 \
     && cmp -s "$SRC/random-1MB" "$RK_DIR/out/r"; then ok "recovery: independent-decrypt.py opens the vault with the recovery key ($form)"
  else bad "recovery: independent-decrypt.py with the recovery key ($form):"; sed 's/^/    /' "$RK_DIR/log"; fi
  check "recovery: vault unlock takes the recovery key ($form)" \
    env VAULT_HOME="$RK_HOME" "$VAULT_BIN" unlock --recovery-key-file "$RK_DIR/$form"
done
refuse "recovery: independent-decrypt.py refuses a mistyped recovery key" \
  python3 "$DECRYPT" "$RK_HOME" --recovery-key-file "$RK_DIR/key-typo"
rc=0; VAULT_HOME="$RK_HOME" "$VAULT_BIN" unlock --recovery-key-file "$RK_DIR/key-typo" >/dev/null 2>&1 || rc=$?
if [ "$rc" -eq 3 ]; then ok "recovery: vault refuses the mistyped recovery key (exit 3)"; else bad "recovery: mistyped key: vault exit $rc, expected 3"; fi

# Key rotation (SECURITY.md "Key rotation"): a vault killed at a crash point of a rotation reads
# with the password alone (the new master key from pendingRotation, the database under either
# key, each header under its epoch's key, a torn header from rotation.journal); so does the
# vault after the next command finished the rotation (epoch 2, a key history).
echo "== key rotation =="
for point in rotate-journaled rotate-some-headers rotate-db-rekeyed finished; do
  dir="$WORK/rot-$point"; home="$dir/home"; mkdir -p "$dir"
  printf 'rotation password %s\n' "$point" > "$dir/pw"
  run_vault "$home" "$dir/pw" init --kdf-ops 1 --kdf-mem 8M >/dev/null
  for f in one-byte seg-exact-65536 two-segments-131072 random-1MB empty; do run_vault "$home" "$dir/pw" put "$SRC/$f" "/$f" >/dev/null; done
  if [ "$point" = finished ]; then
    run_vault "$home" "$dir/pw" key rotate >/dev/null || bad "rotation: vault key rotate failed"
  else
    # (in an inner shell, which reports the kill to /dev/null instead of this script's output)
    rc=0; bash -c '"$@"; exit $?' _ env VAULT_HOME="$home" VAULT_TEST_HOOKS=1 VAULT_TEST_CRASH_AT="$point" "$VAULT_BIN" key rotate \
      --password-file "$dir/pw" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 137 ] || bad "rotation: kill at $point: vault exit $rc, expected 137 (SIGKILL)"
    grep -q '"pendingRotation"' "$home/keyslots" || bad "rotation: no pendingRotation after a kill at $point"
  fi
  if [ "$point" = rotate-journaled ]; then   # a header torn mid-write: its wrapped key half overwritten
    python3 - "$(largest_blob "$home")" <<'EOF2'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(60); f.write(b"\xee" * 40)
EOF2
  fi
  for pass in "as left" "after the next command"; do
    rm -rf "$dir/out"
    if python3 "$DECRYPT" "$home" --password-file "$dir/pw" --out "$dir/out" --check-db-pages >"$dir/log" 2>&1; then
      same=1; for f in one-byte seg-exact-65536 two-segments-131072 random-1MB empty; do cmp -s "$SRC/$f" "$dir/out/$f" || same=0; done
      if [ "$same" = 1 ]; then ok "rotation ($point, $pass): independent-decrypt.py decrypted every file identically"
      else bad "rotation ($point, $pass): a decrypted file differs"; fi
      if [ "$pass" = "as left" ]; then   # the state each crash point leaves, as the decryptor saw it
        case $point in
          rotate-journaled) grep -q "rotation.journal record does" "$dir/log" \
            && ok "rotation ($point): the torn header was read from rotation.journal" || bad "rotation ($point): torn header not taken from the journal" ;;
          rotate-some-headers) grep -q "epoch 1, " "$dir/log" && grep -q "epoch 2, " "$dir/log" \
            && ok "rotation ($point): headers of both epochs, each under its own key" || bad "rotation ($point): expected headers of epochs 1 and 2" ;;
          rotate-db-rekeyed) grep -q "(epoch 2)" "$dir/log" \
            && ok "rotation ($point): the database under the new key" || bad "rotation ($point): expected the database under epoch 2's key" ;;
        esac
      fi
    else
      bad "rotation ($point, $pass): independent-decrypt.py failed:"; sed 's/^/    /' "$dir/log"
    fi
    if [ "$pass" = "as left" ]; then
      run_vault "$home" "$dir/pw" ls / >/dev/null || bad "rotation ($point): vault did not finish the rotation"
    fi
  done
  grep -q '"epoch":2' "$home/keyslots" && grep -q '"history":\[{"epoch":1' "$home/keyslots" \
    && ok "rotation ($point): epoch 2 with the history entry of epoch 1" || bad "rotation ($point): keyslot file not at epoch 2 with a history"
done

# Passwords are Unicode NFC: a vault made with a decomposed password ("u" + U+0308) opens, for
# vault and for the decryptor, with the composed form ("ü", U+00FC) and with the decomposed one.
echo "== NFC password =="
NFC_HOME="$WORK/nfc/home"; mkdir -p "$WORK/nfc"
printf 'pa\x75\xcc\x88ssw\x6f\xcc\x88rd nfc\n' > "$WORK/nfc/decomposed"
printf 'pa\xc3\xbcssw\xc3\xb6rd nfc\n' > "$WORK/nfc/composed"
check "nfc: vault init with a decomposed password" run_vault "$NFC_HOME" "$WORK/nfc/decomposed" init --kdf-ops 1 --kdf-mem 8M
check "nfc: vault opens it with the composed form" run_vault "$NFC_HOME" "$WORK/nfc/composed" ls /
for form in composed decomposed; do
  check "nfc: independent-decrypt.py opens it with the $form form" \
    python3 "$DECRYPT" "$NFC_HOME" --password-file "$WORK/nfc/$form" --out "$WORK/nfc/out-$form"
done

# Vaults made by the schema-7 and schema-8 releases (Tests/Fixtures/schema7, schema8): the
# decryptor reads each as it is (schema 7: JSON content records; 8: compact bases, TEXT nodes)
# and, once vault upgraded a copy to schema 15 (compact nodes, bases from their nodes, compact outbox and blobs, the folders index, outbox entries and blobs from their nodes), the same bases and every file.
echo "== schemas 7, 8 and 15 =="
for S in 7 8; do
  FX="$ROOT/Tests/Fixtures/schema$S"
  SD="$WORK/schema$S"; mkdir -p "$SD"; cp -r "$FX/vault" "$SD/home"; mkdir -p "$SD/home/tmp"
  find "$SD/home" -type d -exec chmod 700 {} +; find "$SD/home" -type f -exec chmod 600 {} +
  if python3 "$DECRYPT" "$SD/home" --password-file "$FX/password" --check-db-pages --dump-bases >"$SD/before" 2>&1 \
      && grep -q "schema $S, 9 nodes, 5 blobs, 7 bases (4 with a content record)" "$SD/before"; then
    ok "schema $S: independent-decrypt.py reads the fixture's nodes, blobs and 7 bases"
  else bad "schema $S: independent-decrypt.py on the fixture:"; sed 's/^/    /' "$SD/before"; fi
  check "schema $S: vault upgrades the fixture on first open (doctor)" run_vault "$SD/home" "$FX/password" doctor
  if python3 "$DECRYPT" "$SD/home" --password-file "$FX/password" --out "$SD/out" --check-db-pages --dump-bases >"$SD/after" 2>&1 \
      && grep -q "schema 15, 9 nodes, 5 blobs, 7 bases (4 with a content record)" "$SD/after" && grep -q "5 file(s), 5 decrypted and verified" "$SD/after"; then
    ok "schema $S upgraded to 15: independent-decrypt.py reads the vault and decrypts its 5 files"
  else bad "schema $S upgraded to 15: independent-decrypt.py on the upgraded fixture:"; sed 's/^/    /' "$SD/after"; fi
  grep '^base ' "$SD/before" > "$SD/bases-before" || true; grep '^base ' "$SD/after" > "$SD/bases-after" || true
  if [ "$(wc -l < "$SD/bases-before")" -eq 7 ] && cmp -s "$SD/bases-before" "$SD/bases-after"; then
    ok "schema $S upgraded to 15: the same 7 bases, field by field"
  else bad "schema $S upgraded to 15: the bases differ"; diff "$SD/bases-before" "$SD/bases-after" | head -n 10 | sed 's/^/    /'; fi
done

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
