#!/bin/sh
# The two-way sync simulation (Sources/VaultSimulation) for many seeds, in a release build:
#   scripts/sim.sh 10000             ten thousand seeds from 1: failures and seeds per second
#   scripts/sim.sh 10000 --first 5000
#   scripts/sim.sh --seed S [--verbose]   one seed (the reproduction a failure prints)
set -e
cd "$(dirname "$0")/.."
swift build -c release --product vault-sim >/dev/null
exec .build/release/vault-sim "$@"
