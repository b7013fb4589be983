#!/usr/bin/env bash
# Writes the files generated from the command definitions: the manual pages docs/vault.1 and
# docs/vault-server.8, and the shell completions in completions/. Run it after changing a command;
# GeneratedFilesTests fails while the committed files differ from what the code makes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh >/dev/null
swift build --product vault 2>&1 | grep -E "error|Compiling|Build" | tail -3
swift build --product vault-server 2>&1 | grep -E "error|Compiling|Build" | tail -3
bin="$(swift build --show-bin-path)"
mkdir -p docs completions
"$bin/vault" help --man >docs/vault.1
"$bin/vault-server" help --man >docs/vault-server.8
"$bin/vault" completion bash >completions/vault.bash
"$bin/vault" completion zsh >completions/_vault
"$bin/vault" completion fish >completions/vault.fish
echo "wrote docs/vault.1 docs/vault-server.8 completions/vault.bash completions/_vault completions/vault.fish"
