#!/usr/bin/env bash
# Installs what the tests need and runs every test: unit tests, the end-to-end tests through the
# real `vault` and `vault-server` binaries against a real keyring (a throwaway D-Bus session with
# gnome-keyring), the independent-decryptor check of SECURITY.md, and the behaviour-parity check
# of docs/openapi.yaml against a real vault-server (schemathesis); the server suite again on
# PostgreSQL and on PostgreSQL + S3, and the client's end-to-end suites through a deployment of three
# instances on both behind haproxy.
set -euo pipefail
cd "$(dirname "$0")/.."
# How long each part took, printed as it ends and again at the end, so a slow part is visible.
PART_START=${EPOCHREALTIME//[!0-9]/}
PART_TIMES=()
took() {
  local now=${EPOCHREALTIME//[!0-9]/}
  local us=$((now - PART_START))
  local t
  t=$(printf '%d.%d s' $((us / 1000000)) $((us % 1000000 / 100000)))
  echo "time: $1: $t"
  PART_TIMES+=("$1: $t")
  PART_START=$now
}
source scripts/install-deps.sh
took "dependencies"
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 3
took "build"
# SECURITY.md is precise enough for an independent decryptor (Python, no vault code) to read a vault.
INDEP_LOG=$(mktemp /tmp/vault-indep-log.XXXXXX)
indep=0
VAULT_BIN="$(swift build --show-bin-path)/vault" scripts/check-independent-decrypt.sh >"$INDEP_LOG" 2>&1 || indep=$?
grep -A 12 "^FAIL" "$INDEP_LOG" || true   # every failure in full, with its details
tail -n 5 "$INDEP_LOG"; rm -f "$INDEP_LOG"
took "independent decryptor (vault folder)"
# ...and SECURITY.md "End to end" for what a server stores: real synced vaults, decoded independently.
INDEP_SERVER_LOG=$(mktemp /tmp/vault-indep-server-log.XXXXXX)
indep_server=0
VAULT_BIN="$(swift build --show-bin-path)/vault" VAULT_SERVER_BIN="$(swift build --show-bin-path)/vault-server" \
  scripts/check-independent-decrypt-server.sh >"$INDEP_SERVER_LOG" 2>&1 || indep_server=$?
grep -A 12 "^FAIL" "$INDEP_SERVER_LOG" || true
tail -n 3 "$INDEP_SERVER_LOG"; rm -f "$INDEP_SERVER_LOG"
took "independent decoder (server data)"
# docs/openapi.yaml and the server behave alike (the route-parity test only compares route lists).
API_LOG=$(mktemp /tmp/vault-api-log.XXXXXX)
api=0
VAULT_SERVER_BIN="$(swift build --show-bin-path)/vault-server" scripts/check-openapi-behaviour.sh >"$API_LOG" 2>&1 || api=$?
if [ "$api" -ne 0 ]; then cat "$API_LOG"; else tail -n 3 "$API_LOG"; fi   # every failure in full
rm -f "$API_LOG"
took "OpenAPI behaviour"
# The generated shell completions answer as bash would on <Tab>; the zsh and fish ones parse.
comp=0
scripts/test-completions.sh || comp=$?
took "completions"
# The server suite again with its metadata in PostgreSQL (issue 22): each server a test starts
# keeps it in a fresh database of a PostgreSQL the test process starts itself (PostgresCluster).
PG_LOG=$(mktemp /tmp/vault-pg-log.XXXXXX)
pg=0
VAULT_TEST_METADATA=postgresql swift test --skip-build --filter VaultServerTests >"$PG_LOG" 2>&1 || pg=$?
if [ "$pg" -ne 0 ]; then grep -E "error:|failed \(" "$PG_LOG" | head -n 40; fi
grep -E "Executed [0-9]+ tests?" "$PG_LOG" | tail -n 1; rm -f "$PG_LOG"
took "server tests on PostgreSQL"
# ...and once more as the distributed deployment runs it (issue 22): metadata in PostgreSQL and
# content in S3, a fresh bucket of a SeaweedFS the test process starts itself (SeaweedS3, the
# `weed` of install-deps.sh). S3ContentTests already ran in the main run.
S3_LOG=$(mktemp /tmp/vault-s3-log.XXXXXX)
s3=0
VAULT_TEST_METADATA=postgresql VAULT_TEST_CONTENT=s3 swift test --skip-build --filter VaultServerTests --skip S3ContentTests \
  >"$S3_LOG" 2>&1 || s3=$?
if [ "$s3" -ne 0 ]; then grep -E "error:|failed \(" "$S3_LOG" | head -n 40; fi
grep -E "Executed [0-9]+ tests?" "$S3_LOG" | tail -n 1; rm -f "$S3_LOG"
took "server tests on PostgreSQL + S3"
# The client's end-to-end suites once more through a distributed deployment (issue 22): every
# server they start is 3 instances on PostgreSQL and SeaweedFS S3 behind haproxy (Deployment.swift).
BAL_LOG=$(mktemp /tmp/vault-balanced-log.XXXXXX)
bal=0
VAULT_TEST_DEPLOYMENT=balanced dbus-run-session -- scripts/with-keyring.sh swift test --skip-build \
  --filter 'VaultCLITests\.(TwoWaySyncTests|EndToEndTests|TransferTests|MaliciousServerTests|DownloadFaultTests|AgentTransferTests)/' \
  >"$BAL_LOG" 2>&1 || bal=$?
if [ "$bal" -ne 0 ]; then grep -E "error:|failed \(" "$BAL_LOG" | head -n 40; fi
grep -E "Executed [0-9]+ tests?" "$BAL_LOG" | tail -n 1; rm -f "$BAL_LOG"
took "client suites through 3 instances on PostgreSQL + S3"
LOG=$(mktemp /tmp/vault-test-log.XXXXXX)
trap 'rm -f "$LOG"' EXIT
set +e
dbus-run-session -- scripts/with-keyring.sh swift test --skip-build 2>&1 \
  | grep --line-buffered -Ev "fd limit|^dbus-daemon|^warning: prohibited flag" | tee "$LOG"
status=${PIPESTATUS[0]}
set -e
took "XCTest run"
echo "time of each part:"
printf '  %s\n' "${PART_TIMES[@]}"
# The 10 slowest test classes, then one plain closing line with the XCTest totals.
python3 - "$LOG" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
suites = re.findall(r"Test Suite '([^']+)' (?:passed|failed) at [^\n]*\n\s*Executed (\d+) tests?, with .*? in ([\d.]+) \(", log)
classes = [(name, int(n), float(t)) for name, n, t in suites
           if not name.endswith(".xctest") and name not in ("All tests", "Selected tests")]
if classes:
    print("slowest test classes:")
    for name, n, t in sorted(classes, key=lambda c: -c[2])[:10]:
        print(f"  {t:8.1f} s  {name} ({n} tests)")
runs = re.findall(r"Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?", log)
if runs:
    n, s, f = (int(x or 0) for x in runs[-1])
    print(f"xctest: {n - s - f} passed, {f} failed, {s} skipped")
PY
[ "$indep" -eq 0 ] || { echo "the independent-decryptor check failed (above)"; exit 1; }
[ "$indep_server" -eq 0 ] || { echo "the independent server-decoder check failed (above)"; exit 1; }
[ "$api" -eq 0 ] || { echo "the OpenAPI behaviour check failed (above)"; exit 1; }
[ "$comp" -eq 0 ] || { echo "the completion check failed (above)"; exit 1; }
[ "$pg" -eq 0 ] || { echo "the server tests on PostgreSQL failed (above)"; exit 1; }
[ "$s3" -eq 0 ] || { echo "the server tests on PostgreSQL + S3 failed (above)"; exit 1; }
[ "$bal" -eq 0 ] || { echo "the client suites through the distributed deployment failed (above)"; exit 1; }
exit "$status"
