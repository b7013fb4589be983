#!/usr/bin/env bash
# Installs vault under PREFIX (default /usr/local; DESTDIR is honoured for packaging): the release
# builds of `vault` and `vault-server`, the manual pages vault(1) and vault-server(8), the bash,
# zsh and fish completions, and the agent's systemd user unit. The pages and completions are the
# ones generated from the command definitions (scripts/generate-docs.sh), committed in docs/ and
# completions/. Usage: scripts/install.sh [PREFIX]
set -euo pipefail
PREFIX=${1:-/usr/local}
DEST="${DESTDIR:-}$PREFIX"
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; else
    echo "error: the Swift 6.3 toolchain is not installed (expected swift on PATH or /opt/swift)" >&2; exit 1
  fi
fi
for product in vault vault-server; do
  swift build -c release --product "$product" 2>&1 | grep -E "error|warning: unre|Build" | tail -3
done
bin="$(swift build -c release --show-bin-path)"

install -D -m 0755 "$bin/vault" "$DEST/bin/vault"
install -D -m 0755 "$bin/vault-server" "$DEST/bin/vault-server"
install -D -m 0644 docs/vault.1 "$DEST/share/man/man1/vault.1"
install -D -m 0644 docs/vault-server.8 "$DEST/share/man/man8/vault-server.8"
install -D -m 0644 completions/vault.bash "$DEST/share/bash-completion/completions/vault"
install -D -m 0644 completions/_vault "$DEST/share/zsh/site-functions/_vault"
install -D -m 0644 completions/vault.fish "$DEST/share/fish/vendor_completions.d/vault.fish"
echo "installed vault and vault-server in $DEST/bin, vault(1) and vault-server(8) in $DEST/share/man,"
echo "completions in $DEST/share/{bash-completion/completions,zsh/site-functions,fish/vendor_completions.d}"
# AGENT UNIT NOT INSTALLED: `vault agent` (issue 12) has not landed on main yet; when it does, install its systemd user unit here.
