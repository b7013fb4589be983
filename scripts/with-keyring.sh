#!/usr/bin/env bash
# Runs a command with a throwaway, unlocked gnome-keyring Secret Service.
# Use inside a D-Bus session: dbus-run-session -- scripts/with-keyring.sh CMD...
set -euo pipefail
KEYRING_HOME=$(mktemp -d /tmp/vault-keyring.XXXXXX)
export XDG_DATA_HOME="$KEYRING_HOME/data" XDG_CONFIG_HOME="$KEYRING_HOME/config" XDG_CACHE_HOME="$KEYRING_HOME/cache"
export XDG_RUNTIME_DIR="$KEYRING_HOME/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
# A non-empty throwaway password creates and unlocks the login keyring without a prompt.
eval "$(printf 'throwaway-test-keyring' | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
cleanup() { pkill -u "$(id -u)" -f "gnome-keyring-daemon.*$KEYRING_HOME" 2>/dev/null || true; [ -n "${GNOME_KEYRING_PID:-}" ] && kill "$GNOME_KEYRING_PID" 2>/dev/null; rm -rf "$KEYRING_HOME"; }
trap cleanup EXIT
"$@"
