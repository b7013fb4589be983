#!/usr/bin/env bash
# Installs vault under PREFIX (default /usr/local; DESTDIR is honoured for packaging): the release
# builds of `vault`, `vault-agent` (the long-lived agent `vault agent` becomes; it must sit beside
# `vault`, which runs its helpers) and `vault-server`, the manual pages vault(1) and
# vault-server(8), the bash, zsh and fish completions, and the agent's systemd user unit for the
# default vault. The pages and completions are the ones generated from the command definitions
# (scripts/generate-docs.sh), committed in docs/ and completions/. Usage: scripts/install.sh [PREFIX]
set -euo pipefail
PREFIX=${1:-/usr/local}
DEST="${DESTDIR:-}$PREFIX"
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; else
    echo "error: the Swift 6.3 toolchain is not installed (expected swift on PATH or /opt/swift)" >&2; exit 1
  fi
fi
for product in vault vault-agent vault-server; do
  swift build -c release --product "$product" 2>&1 | grep -E "error|warning: unre|Build" | tail -3
done
bin="$(swift build -c release --show-bin-path)"

install -D -m 0755 "$bin/vault" "$DEST/bin/vault"
install -D -m 0755 "$bin/vault-agent" "$DEST/bin/vault-agent"
install -D -m 0755 "$bin/vault-server" "$DEST/bin/vault-server"
install -D -m 0644 docs/vault.1 "$DEST/share/man/man1/vault.1"
install -D -m 0644 docs/vault-server.8 "$DEST/share/man/man8/vault-server.8"
install -D -m 0644 completions/vault.bash "$DEST/share/bash-completion/completions/vault"
install -D -m 0644 completions/_vault "$DEST/share/zsh/site-functions/_vault"
install -D -m 0644 completions/vault.fish "$DEST/share/fish/vendor_completions.d/vault.fish"
# The agent's systemd user unit for the default vault ($XDG_DATA_HOME/vault): the unit
# `vault agent install` writes (Sources/VaultAgent/SystemdUnit.swift), without a VAULT_HOME; a
# vault elsewhere gets its own unit from `vault agent install`. AgentUnitTests checks that the two
# keep the same [Service] and [Install] lines.
unit="$DEST/lib/systemd/user/vault-agent.service"
install -d -m 0755 "$(dirname "$unit")"
cat >"$unit" <<UNIT
# Installed by scripts/install.sh: the vault agent for the default vault (\$XDG_DATA_HOME/vault).
# Enable it with: systemctl --user enable --now vault-agent  (a vault elsewhere: vault agent install)
[Unit]
Description=vault agent: auto-lock at the deadline, background transfers, push channel
After=dbus.socket

[Service]
Type=simple
ExecStart="$PREFIX/bin/vault" agent
Restart=on-failure
RestartSec=2
UMask=0077
LimitCORE=0
NoNewPrivileges=yes

[Install]
WantedBy=default.target
UNIT
chmod 0644 "$unit"
echo "installed vault, vault-agent and vault-server in $DEST/bin, vault(1) and vault-server(8) in $DEST/share/man,"
echo "completions in $DEST/share/{bash-completion/completions,zsh/site-functions,fish/vendor_completions.d},"
echo "and the agent's user unit in $unit (systemctl --user enable --now vault-agent)"
