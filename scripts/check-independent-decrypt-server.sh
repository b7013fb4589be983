#!/usr/bin/env bash
# Proves SECURITY.md "End to end": an independent program (scripts/independent-decrypt-server.py,
# Python, no vault code) decrypts what a real vault-server stores for an account, from the
# password alone, byte for byte.
#
#   scripts/check-independent-decrypt-server.sh      # builds vault and vault-server into .build-docs
#   VAULT_BIN=/path/to/vault VAULT_SERVER_BIN=/path/to/vault-server scripts/check-independent-decrypt-server.sh
#
# Two accounts on one server, each a vault synced with the real `vault` binary: files at the
# segment edges, unicode names, nested folders, renames and moves, new revisions, a restore (the
# server API), a key rotation with content of both epochs (and a second device that joined and
# caught up), padding off (Argon2id) and on (PBKDF2, `remotePadding: padme`). The decoder must read
# every name, head and revision back; a wrong password, a flipped content byte, two content files
# swapped, a name token moved to another row, and a stored size changed must each be refused.
# Ends with "N passed, M failed" and exits non-zero when M > 0. Removes its temp folders.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DECRYPT="$ROOT/scripts/independent-decrypt-server.py"
# shellcheck source=lib/tally.sh
. "$ROOT/scripts/lib/tally.sh"

# --- tools ------------------------------------------------------------------------------------
if [ -z "${VAULT_BIN:-}" ] || [ -z "${VAULT_SERVER_BIN:-}" ]; then
  export PATH=/opt/swift/usr/bin:$PATH
  echo "building vault and vault-server (scratch path $ROOT/.build-docs)..."
  for p in vault vault-server; do
    (cd "$ROOT" && swift build --scratch-path "$ROOT/.build-docs" --product "$p" 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1)
  done
  BIN="$(cd "$ROOT" && swift build --scratch-path "$ROOT/.build-docs" --show-bin-path)"
  VAULT_BIN="$BIN/vault"; VAULT_SERVER_BIN="$BIN/vault-server"
fi
[ -x "$VAULT_BIN" ] && [ -x "$VAULT_SERVER_BIN" ] || { echo "error: no vault/vault-server binaries" >&2; exit 2; }
if ! python3 -c "import cryptography, argon2" 2>/dev/null; then
  python3 -m pip install --quiet cryptography argon2-cffi 2>&1 | grep -v "WARNING: Running pip as the 'root'" || true
fi
command -v sqlite3 >/dev/null || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq sqlite3 >/dev/null; }

WORK=$(mktemp -d /tmp/vault-indep-server.XXXXXX)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
chmod 700 "$WORK"
export VAULT_NO_KEYRING=1 VAULT_RETRY_BASE_MS=50 VAULT_RETRY_CAP_MS=500
unset VAULT_PASSWORD_COMMAND XDG_DATA_HOME XDG_CONFIG_HOME VAULT_POLICY_FILE || true

# --- server -----------------------------------------------------------------------------------
DATA="$WORK/server-data"
for u in alice bob; do
  printf '%s server pass\n' "$u" > "$WORK/$u.server-pw"
  "$VAULT_SERVER_BIN" user add "$u" --data "$DATA" --password-file "$WORK/$u.server-pw" >/dev/null
done
"$VAULT_SERVER_BIN" serve --data "$DATA" --listen 127.0.0.1:0 --max-chunk 1048576 > "$WORK/server.out" 2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/server.out")
[ -n "$PORT" ] || { echo "error: vault-server did not start" >&2; cat "$WORK/server.log" >&2; exit 2; }
URL="http://127.0.0.1:$PORT"
token() { curl -sf -X POST -H 'Content-Type: application/json' --data-binary "{\"username\":\"$1\",\"password\":\"$1 server pass\"}" \
  "$URL/v1/auth/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'; }

# --- originals --------------------------------------------------------------------------------
SRC="$WORK/src"; mkdir -p "$SRC"
: > "$SRC/empty"
printf 'x' > "$SRC/one-byte"
head -c 65536  /dev/urandom > "$SRC/seg-exact"
head -c 65537  /dev/urandom > "$SRC/seg-plus-one"
head -c 1048579 /dev/urandom > "$SRC/random-1MB"
printf 'first version\n' > "$SRC/v1"; printf 'second version, longer\n' > "$SRC/v2"
head -c 200000 /dev/urandom > "$SRC/after-rotation"
UNI="Grüße – 日本語 ✓.txt"
printf 'unicode\n' > "$SRC/uni"

v() { VAULT_HOME="$HOME_DIR" "$VAULT_BIN" "$@" --password-file "$PW" 2>>"$WORK/vault-stderr.log"; }

check_account() { # USER LABEL SETTINGS-JSON INIT-ARGS...
  local user=$1 label=$2 settings=$3; shift 3
  HOME_DIR="$WORK/$label/home"; PW="$WORK/$label/password"; local out="$WORK/$label/out"
  mkdir -p "$WORK/$label"
  printf 'correct horse battery staple %s ünï\n' "$label" > "$PW"
  echo "== $label: vault init $*; settings $settings =="
  v init "$@" >/dev/null || bad "$label: vault init"
  mkdir -p "$HOME_DIR/config"; printf '%s\n' "$settings" > "$HOME_DIR/config/settings.json"
  v login --server "$URL" --user "$user" --server-password-file "$WORK/$user.server-pw" >/dev/null || bad "$label: vault login"
  # Expected tree after everything below: path -> source.
  declare -gA WANT=()
  v mkdir -p /docs/deep/nested >/dev/null; v mkdir -p "/photos/2024/Été" >/dev/null
  v put "$SRC/empty" /empty >/dev/null;               WANT[/empty]=empty
  v put "$SRC/one-byte" /docs/one-byte >/dev/null;    WANT[/docs/one-byte]=one-byte
  v put "$SRC/seg-exact" /docs/deep/nested/seg-exact >/dev/null
  v put "$SRC/seg-plus-one" /docs/deep/nested/seg-plus-one >/dev/null; WANT[/docs/deep/nested/seg-plus-one]=seg-plus-one
  v put "$SRC/random-1MB" "/photos/2024/Été/random-1MB" >/dev/null
  v put "$SRC/uni" "/docs/deep/nested/$UNI" >/dev/null; WANT["/docs/deep/nested/$UNI"]=uni
  v put "$SRC/v1" /versions.txt >/dev/null
  v sync >/dev/null || bad "$label: first sync"
  # Renames and moves, a new revision.
  v mv /docs/deep/nested/seg-exact /photos/seg-exact-moved >/dev/null; WANT[/photos/seg-exact-moved]=seg-exact
  v mv "/photos/2024/Été/random-1MB" "/photos/2024/Été/renamed-1MB" >/dev/null; WANT["/photos/2024/Été/renamed-1MB"]=random-1MB
  v put --replace "$SRC/v2" /versions.txt >/dev/null
  v sync >/dev/null || bad "$label: second sync"
  # A restore of the first version (`vault restore`: the server makes a new head, sealed with a
  # content record of the next sequence number; a bare server-side restore would reuse the old
  # record, which every device that saw the newer one refuses as a rollback).
  local rev
  rev=$(v revisions /versions.txt --json | python3 -c '
import json, sys
print(next(r["id"] for r in json.load(sys.stdin)["revisions"] if r["size"] == 14 and not r["isHead"]))') || true
  if [ -n "$rev" ] && v restore /versions.txt --revision "$rev" >/dev/null; then
    ok "$label: a revision restored (vault restore)"; WANT[/versions.txt]=v1
  else bad "$label: vault restore"; fi
  # A rotation, then content of the new epoch; a second device joins and catches up.
  v key rotate >/dev/null || bad "$label: vault key rotate"
  v put "$SRC/after-rotation" /docs/after-rotation >/dev/null; WANT[/docs/after-rotation]=after-rotation
  v sync >/dev/null || bad "$label: sync after the rotation"
  local epochs
  epochs=$(sqlite3 "$DATA/meta.db" "SELECT DISTINCT substr(content_meta, 1, instr(content_meta, '.')) FROM files f JOIN users u ON u.id = f.owner WHERE u.name = '$user' AND f.trashed = 0 AND f.type = 'file' ORDER BY 1;" | tr '\n' ' ')
  if [ "$epochs" = "1. 2. " ]; then ok "$label: heads of both key epochs on the server ($epochs)"; else bad "$label: content record epochs: '$epochs'"; fi

  # Nothing in clear on the server.
  local m found=""
  for m in seg-plus-one renamed-1MB after-rotation "Grüße" "first version" "second version" versions.txt; do
    if grep -rqaF "$m" "$DATA" "$WORK/server.log"; then found="$found $m"; fi
  done
  if [ -z "$found" ]; then ok "$label: no name or content in clear under the server's data folder or in its log"
  else bad "$label: found in clear on the server:$found"; fi

  # The independent decryption: the data folder, the account name and the password.
  local log="$WORK/$label/decrypt.log"
  if python3 "$DECRYPT" "$DATA" --user "$user" --password-file "$PW" --out "$out" --revisions >"$log" 2>&1; then
    ok "$label: independent-decrypt-server.py opened the envelope, every name and every content"
  else
    bad "$label: independent-decrypt-server.py failed:"; sed 's/^/    /' "$log"
  fi
  sed 's/^/    /' "$log" | head -n 30
  local p
  for p in "${!WANT[@]}"; do
    if cmp -s "$SRC/${WANT[$p]}" "$out$p"; then ok "$label: $p identical ($(stat -c %s "$SRC/${WANT[$p]}") bytes)"
    else bad "$label: $p differs or is missing"; fi
  done
  local heads; heads=$(find "$out" -type f ! -name '*@*' | wc -l)
  if [ "$heads" -eq "${#WANT[@]}" ]; then ok "$label: exactly ${#WANT[@]} heads"; else bad "$label: $heads heads, expected ${#WANT[@]}"; fi
  local revs; revs=$(find "$out" -type f -name 'versions.txt@*' -exec cat {} + | sort -u | tr '\n' '|')
  if [ "$revs" = "first version|second version, longer|" ]; then ok "$label: every revision of versions.txt decrypts"
  else bad "$label: revisions of versions.txt: '$revs'"; fi

  # A second device joins, and reads content of both epochs.
  local b="$WORK/$label/device-b"
  if VAULT_HOME="$b" "$VAULT_BIN" join --server "$URL" --user "$user" --server-password-file "$WORK/$user.server-pw" \
       --password-file "$PW" >/dev/null 2>>"$WORK/vault-stderr.log"; then ok "$label: a second device joined"
  else bad "$label: vault join"; fi
  if cmp -s "$b/keyslots" "$HOME_DIR/keyslots"; then ok "$label: the joined device's keyslot file is the envelope"; else bad "$label: joined keyslots differ"; fi
}

refused() { # LABEL USER PW-FILE WHAT
  if python3 "$DECRYPT" "$DATA" --user "$2" --password-file "$3" >"$WORK/refused.log" 2>&1; then bad "$1: $4 was NOT refused"
  else ok "$1: $4 refused: $(grep -o 'FAILED: .*' "$WORK/refused.log" | cut -c 9-140)"; fi
}

tampered() { # LABEL USER PW-FILE WHAT SQL-OR-SHELL
  local label=$1 user=$2 pw=$3 what=$4; shift 4
  cp -a "$DATA" "$WORK/data-backup"
  "$@"
  refused "$label" "$user" "$pw" "$what"
  rm -rf "$DATA"; mv "$WORK/data-backup" "$DATA"
}

check_account alice argon2id '{}' --kdf-ops 1 --kdf-mem 8M
ALICE_PW=$PW
check_account bob pbkdf2-padme '{"remotePadding": "padme"}' --kdf pbkdf2 --pbkdf2-iterations 2000
BOB_PW=$PW

# Padding on: every stored size is the Padmé size of the sealed size, padding zeros.
padded=$(sqlite3 "$DATA/meta.db" "SELECT count(*) FROM files f JOIN users u ON u.id = f.owner WHERE u.name = 'bob' AND f.type = 'file' AND f.trashed = 0 AND f.size > 0;")
python3 - "$DATA" <<'EOF' && ok "bob: $padded stored sizes are Padmé sizes of their sealed sizes" || bad "bob: stored sizes are not Padmé sizes"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1] + "/meta.db")
def padme(l):
    if l < 2: return l
    e = l.bit_length() - 1; s = e.bit_length(); m = (1 << (e - s)) - 1
    return (l + m) & ~m
rows = db.execute("SELECT f.size FROM files f JOIN users u ON u.id = f.owner WHERE u.name = 'bob' AND f.type = 'file' AND f.trashed = 0").fetchall()
# every size is padme(z) for its sealed size z: a Padmé size is its own class, and differs from z for these files
sys.exit(0 if rows and all(padme(s) == s for (s,) in rows) else 1)
EOF

echo "== refusals =="
printf 'not the password\n' > "$WORK/wrong"
refused alice alice "$WORK/wrong" "a wrong password"
flip_content() { python3 - "$DATA" <<'EOF'
import os, sqlite3, sys
d = sys.argv[1]; db = sqlite3.connect(d + "/meta.db")
rid, = db.execute("SELECT f.head_revision_id FROM files f JOIN users u ON u.id = f.owner WHERE u.name = 'alice' AND f.size > 100000 AND f.trashed = 0 LIMIT 1").fetchone()
p = os.path.join(d, "content", rid); b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 1; open(p, "wb").write(b)
EOF
}
swap_content() { python3 - "$DATA" <<'EOF'
import os, sqlite3, sys
d = sys.argv[1]; db = sqlite3.connect(d + "/meta.db")
(a,), (b,) = db.execute("SELECT f.head_revision_id FROM files f JOIN users u ON u.id = f.owner WHERE u.name = 'alice' AND f.size > 0 AND f.trashed = 0 AND f.type = 'file' ORDER BY f.size DESC LIMIT 2").fetchall()
pa, pb = (os.path.join(d, "content", x) for x in (a, b)); os.rename(pa, pa + ".x"); os.rename(pb, pa); os.rename(pa + ".x", pb)
db.execute("UPDATE files SET size = (SELECT size FROM files WHERE head_revision_id = ?) WHERE head_revision_id = ? AND 0", (a, b))
EOF
}
move_token() { sqlite3 "$DATA/meta.db" "UPDATE files SET name = (SELECT f2.name FROM files f2 WHERE f2.type = 'file' AND f2.trashed = 0 AND f2.owner = files.owner AND f2.parent_id != files.parent_id LIMIT 1) WHERE id = (SELECT f.id FROM files f JOIN users u ON u.id = f.owner WHERE u.name = 'alice' AND f.type = 'file' AND f.trashed = 0 LIMIT 1);"; }
grow_size() { sqlite3 "$DATA/meta.db" "UPDATE files SET size = size + 16 WHERE id = (SELECT f.id FROM files f JOIN users u ON u.id = f.owner WHERE u.name = 'alice' AND f.type = 'file' AND f.size > 0 AND f.trashed = 0 LIMIT 1);"; }
other_envelope() { sqlite3 "$DATA/meta.db" "UPDATE envelopes SET body = (SELECT body FROM envelopes e JOIN users u ON u.id = e.owner WHERE u.name = 'bob') WHERE owner = (SELECT id FROM users WHERE name = 'alice');"; }
tampered alice alice "$ALICE_PW" "a flipped byte in a stored content" flip_content
tampered alice alice "$ALICE_PW" "two stored contents swapped" swap_content
tampered alice alice "$ALICE_PW" "a name token moved to another node" move_token
tampered alice alice "$ALICE_PW" "a stored size changed" grow_size
tampered alice alice "$ALICE_PW" "bob's envelope in alice's place" other_envelope

echo
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
