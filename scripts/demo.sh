#!/usr/bin/env bash
# The main job, end to end, on the embedded defaults: builds release `vault` and `vault-server`,
# starts the local reference server (loopback, throwaway data folder), then runs a demo vault
# session against a real (throwaway) keyring: init, unlock, put, ls, tree, cat, pin, storage,
# login, sync, evict, cat (downloads again), transfers, doctor; then a second device (`vault join`)
# sees the first one's files, an edit and its revisions, a restored revision reaching it, and
# `vault conflicts`; lock. Idempotent: every run uses fresh folders under /tmp and stops the server
# at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VAULT_DEMO_INNER:-}" ]; then
  source scripts/install-deps.sh
  swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  swift build -c release --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  export VAULT_DEMO_INNER=1
  exec dbus-run-session -- scripts/with-keyring.sh "$0" "$@" 2> >(grep -Ev "fd limit|^dbus-daemon" >&2)
fi

BIN="$(swift build -c release --show-bin-path)"
VAULT="$BIN/vault"
DEMO=$(mktemp -d /tmp/vault-demo.XXXXXX)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$DEMO"; }
trap cleanup EXIT
export VAULT_HOME="$DEMO/vault"
printf 'demo password 2026\n' > "$DEMO/password"; chmod 600 "$DEMO/password"
printf 'demo server password\n' > "$DEMO/server-password"; chmod 600 "$DEMO/server-password"
step() { printf '\n\033[1m$ vault %s\033[0m\n' "$*"; "$VAULT" "$@"; }

# The local reference server on a free loopback port.
"$BIN/vault-server" user add demo --data "$DEMO/server" --password-file "$DEMO/server-password" > /dev/null
"$BIN/vault-server" serve --data "$DEMO/server" --listen 127.0.0.1:0 --quiet > "$DEMO/server.out" 2> "$DEMO/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q "listening on" "$DEMO/server.out" 2>/dev/null && break; sleep 0.1; done
URL="http://$(sed -n 's/^listening on //p' "$DEMO/server.out" | head -1)"
echo "reference server: $URL (data in $DEMO/server)"

echo "Quarterly numbers: 42" > "$DEMO/report.txt"
head -c 3000000 /dev/urandom > "$DEMO/photo.jpg"

step init --password-file "$DEMO/password"
step unlock --password-file "$DEMO/password"
step mkdir -p /Documents/2026
step put "$DEMO/report.txt" /Documents/2026
step put "$DEMO/photo.jpg" /
step ls -l /
step tree
step cat /Documents/2026/report.txt
step pin /Documents
step storage
step login --server "$URL" --user demo --server-password-file "$DEMO/server-password"
step sync
step evict /photo.jpg
step ls -l /
printf '\n$ vault cat /photo.jpg | sha256sum   (downloads it again, checked)\n'
"$VAULT" cat /photo.jpg | sha256sum; sha256sum < "$DEMO/photo.jpg"
step transfers
step doctor --verify
step status

echo; echo "── a second device of the same vault (its own VAULT_HOME) ──"
export VAULT_HOME="$DEMO/laptop"
step join --server "$URL" --user demo --server-password-file "$DEMO/server-password" --password-file "$DEMO/password"
step config set device-name laptop --password-file "$DEMO/password"
step sync --password-file "$DEMO/password"
step tree --password-file "$DEMO/password"
step cat /Documents/2026/report.txt --password-file "$DEMO/password"
echo "Quarterly numbers: 43 (revised on the laptop)" > "$DEMO/report2.txt"
step put "$DEMO/report2.txt" /Documents/2026/report.txt --replace --password-file "$DEMO/password"
step sync --password-file "$DEMO/password"

echo; echo "── back on the first device ──"
export VAULT_HOME="$DEMO/vault"
step sync
step cat /Documents/2026/report.txt
step revisions /Documents/2026/report.txt
FIRST=$("$VAULT" revisions /Documents/2026/report.txt --json | python3 -c "import json,sys; print(json.load(sys.stdin)['revisions'][-1]['id'])")
step restore /Documents/2026/report.txt --revision "$FIRST"

echo; echo "── the laptop follows ──"
export VAULT_HOME="$DEMO/laptop"
step sync --password-file "$DEMO/password"
# Its own copy is now an older version (S): it still opens offline; evict it and the next read
# downloads the restored head.
step ls -l /Documents/2026 --password-file "$DEMO/password"
step evict /Documents/2026/report.txt --password-file "$DEMO/password"
step cat /Documents/2026/report.txt --password-file "$DEMO/password"
step conflicts --password-file "$DEMO/password"

export VAULT_HOME="$DEMO/vault"
step lock
printf '\n$ vault ls   (locked: refuses)\n'; "$VAULT" ls || echo "(exit $?)"
echo
echo "Demo finished: the vaults lived in $DEMO/vault and $DEMO/laptop, the server in $DEMO/server (all removed now)."
