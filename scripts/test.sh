#!/usr/bin/env bash
# Installs what the tests need and runs every test: unit tests, the end-to-end tests through the
# real `vault` and `vault-server` binaries against a real keyring (a throwaway D-Bus session with
# gnome-keyring), and the independent-decryptor check of SECURITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 3
# SECURITY.md is precise enough for an independent decryptor (Python, no vault code) to read a vault.
VAULT_BIN="$(swift build --show-bin-path)/vault" scripts/check-independent-decrypt.sh | tail -n 5
dbus-run-session -- scripts/with-keyring.sh swift test --skip-build 2>&1 | grep -Ev "fd limit|^dbus-daemon|^warning: prohibited flag"
