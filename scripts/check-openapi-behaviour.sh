#!/usr/bin/env bash
# Behaviour parity of docs/openapi.yaml and vault-server: schemathesis (a property-based tester,
# from PyPI) generates requests from the document - valid ones and every way of breaking each
# rule - sends them to a real vault-server process and checks each answer against the document
# (status codes, bodies, content types, headers, valid input accepted, invalid input refused,
# auth required, no 5xx). The route-parity test (Tests/VaultServerTests/OpenAPITests.swift)
# checks that both list the same routes; this checks that they behave the same.
#
#   scripts/check-openapi-behaviour.sh                              # builds vault-server first
#   VAULT_SERVER_BIN=/path/to/vault-server scripts/check-openapi-behaviour.sh
#   ST_SEED=7 ST_EXAMPLES=100 scripts/check-openapi-behaviour.sh    # another seed, more cases
#
# Two passes: every operation but the test-only fault switches, as an authenticated user of a
# server without --test-faults; then the fault switches alone on a server with --test-faults
# (they would otherwise break the first pass on purpose). scripts/schemathesis.toml and
# scripts/openapi_hooks.py hold what a schema cannot state, each with its reason. Ends with
# "openapi behaviour: N passed, M failed" (passes) and exits non-zero when M > 0.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SEED=${ST_SEED:-20261130}
EXAMPLES=${ST_EXAMPLES:-30}

if [ -z "${SCHEMATHESIS_BIN:-}" ] || [ -z "${VAULT_SERVER_BIN:-}" ]; then
  source scripts/install-deps.sh >/dev/null
fi
if [ -z "${VAULT_SERVER_BIN:-}" ]; then
  swift build --product vault-server 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  VAULT_SERVER_BIN="$(swift build --show-bin-path)/vault-server"
fi
[ -x "$VAULT_SERVER_BIN" ] || { echo "error: no vault-server binary at $VAULT_SERVER_BIN" >&2; exit 2; }
[ -x "$SCHEMATHESIS_BIN" ] || { echo "error: no schemathesis at $SCHEMATHESIS_BIN (run scripts/install-deps.sh)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/vault-openapi.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# start_server NAME ARGS...: starts vault-server on a free port with a user `schemathesis`
# (password in $WORK/password); sets PORT.
start_server() {
  local name=$1; shift
  local data="$WORK/$name"
  mkdir -p "$data"
  "$VAULT_SERVER_BIN" user add schemathesis --data "$data/d" --password-file "$WORK/password" >/dev/null
  "$VAULT_SERVER_BIN" serve --data "$data/d" --listen 127.0.0.1:0 --quiet "$@" >"$data/stdout" 2>"$data/stderr" &
  PIDS+=($!)
  for _ in $(seq 200); do grep -q "listening on" "$data/stdout" 2>/dev/null && break; sleep 0.05; done
  PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$data/stdout")
  [ -n "$PORT" ] || { echo "error: vault-server did not start: $(cat "$data/stderr")" >&2; exit 2; }
}

PASSED=0 FAILED=0
# run_pass LABEL LOG ARGS...: one schemathesis run; its whole report on failure.
run_pass() {
  local label=$1 log=$2; shift 2
  local rc=0
  SCHEMATHESIS_HOOKS="$ROOT/scripts/openapi_hooks.py" "$SCHEMATHESIS_BIN" --config-file "$ROOT/scripts/schemathesis.toml" \
    run "$ROOT/docs/openapi.yaml" --checks all --seed "$SEED" --max-examples "$EXAMPLES" --workers 1 \
    --generation-database none --no-color "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    PASSED=$((PASSED + 1))
    echo "ok   - $label: $(grep -E '^  [0-9]+ generated' "$log" | sed 's/^ *//')"
  else
    FAILED=$((FAILED + 1))
    echo "FAIL - $label (schemathesis exit $rc, seed $SEED):"
    sed 's/^/    /' "$log"
  fi
}

# 1. Every operation but the fault switches, as an authenticated user.
printf 'openapi-check-password\n' >"$WORK/password"
start_server main --max-chunk 4096
TOKEN=$(curl -sS --fail -X POST "http://127.0.0.1:$PORT/v1/auth/token" \
          -d '{"username":"schemathesis","password":"openapi-check-password"}' \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
run_pass "every operation (seed $SEED, $EXAMPLES examples each)" "$WORK/main.log" \
  --url "http://127.0.0.1:$PORT" -H "Authorization: Bearer $TOKEN" --exclude-path /v1/test/faults

# 2. The fault switches (test-only), on a server that has them.
start_server faults --test-faults
run_pass "the fault switches with --test-faults" "$WORK/faults.log" \
  --url "http://127.0.0.1:$PORT" --include-path /v1/test/faults

echo "openapi behaviour: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
