#!/usr/bin/env bash
# The main job, end to end, on the embedded defaults: builds a release `vault`, then runs a
# demo vault session against a real (throwaway) keyring: init, unlock, put, ls, tree, cat, pin,
# storage, doctor, lock. Idempotent: every run uses a fresh demo vault under /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VAULT_DEMO_INNER:-}" ]; then
  source scripts/install-deps.sh
  swift build -c release --product vault 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  export VAULT_DEMO_INNER=1
  exec dbus-run-session -- scripts/with-keyring.sh "$0" "$@" 2> >(grep -Ev "fd limit|^dbus-daemon" >&2)
fi

VAULT="$(pwd)/.build/release/vault"
DEMO=$(mktemp -d /tmp/vault-demo.XXXXXX)
trap 'rm -rf "$DEMO"' EXIT
export VAULT_HOME="$DEMO/vault"
printf 'demo password 2026\n' > "$DEMO/password"; chmod 600 "$DEMO/password"
step() { printf '\n\033[1m$ vault %s\033[0m\n' "$*"; "$VAULT" "$@"; }

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
step doctor --verify
step status
step lock
printf '\n$ vault ls   (locked: refuses)\n'; "$VAULT" ls || echo "(exit $?)"
echo
echo "Demo finished: the vault lived in $VAULT_HOME (removed now)."
