#!/usr/bin/env bash
# Runs the outbox model test at scale: SEEDS seeded random operation sequences (default 1000) of
# OPS operations each (default 60), from FIRST (default 1), against a real vault-server; and,
# with KILLS > 0, the kill loop over KILLS seeds. Prints operations, syncs, seconds and every
# failing seed with its one-line reproduction (replay it with VAULT_OUTBOX_REPRO='…').
#   scripts/outbox-model.sh [SEEDS] [OPS] [FIRST] [KILLS]
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${1:-1000}; OPS=${2:-60}; FIRST=${3:-1}; KILLS=${4:-0}
source scripts/install-deps.sh
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
filter='VaultCLITests.OutboxModelTests/testRandomOperationSequencesMatchTheModel'
[ "$KILLS" -gt 0 ] && filter="$filter|VaultCLITests.OutboxKillTests/testRandomKillsDuringSyncNeverWedgeTheVault"
VAULT_OUTBOX_SEEDS=$SEEDS VAULT_OUTBOX_OPS=$OPS VAULT_OUTBOX_FIRST_SEED=$FIRST \
VAULT_KILL_SEEDS=$KILLS VAULT_KILL_FIRST_SEED=$FIRST \
  dbus-run-session -- scripts/with-keyring.sh swift test --skip-build --filter "$filter" 2>&1 \
  | grep --line-buffered -E "outbox model|outbox kill|error|reproduce|operations:|Executed .* tests"
