#!/usr/bin/env bash
# `vault agent` (BRIEF §11 "agent idle"), side by side in one run, on a release build:
#  1. idle CPU over SECONDS (default 60) of the agent and of its push-channel helper, from
#     /proc/PID/stat utime+stime (target: the agent under 0.1 % of a core, no busy polling)
#  2. idle RSS (VmRSS) of the agent and of the helper (target: the agent at most 32 MiB)
#  3. latency of a command through the agent vs direct (no agent: the key from the keyring
#     item): `vault status` and `vault ls`, RUNS (default 20) runs each, medians and ratio
# The vault is unlocked and logged in to a local vault-server (so the push channel is open, as
# on a real machine). It runs in a D-Bus session of its own with a throwaway keyring.
# Usage: scripts/bench-agent.sh [SECONDS=60] [RUNS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VAULT_BENCH_IN_SESSION:-}" ]; then
  source scripts/install-deps.sh >/dev/null
  for product in vault vault-server; do
    swift build -c release --product "$product" 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  done
  VAULT_BENCH_IN_SESSION=1 exec dbus-run-session -- scripts/with-keyring.sh "$0" "$@"
fi
SECONDS_IDLE=${1:-60}
RUNS=${2:-20}
BIN=$(swift build -c release --show-bin-path)
TMP=$(mktemp -d /tmp/vault-bench-agent.XXXXXX)
SERVER=""; AGENT=""
cleanup() {
  for p in $AGENT $SERVER; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
export VAULT_HOME="$TMP/vault" NO_COLOR=1
printf 'bench password\n' > "$TMP/pw"; printf 'server password\n' > "$TMP/spw"
"$BIN/vault" init --password-file "$TMP/pw" --kdf-ops 1 --kdf-mem 8M > /dev/null
"$BIN/vault-server" user add bench --data "$TMP/server" --password-file "$TMP/spw" > /dev/null
"$BIN/vault-server" serve --data "$TMP/server" --listen 127.0.0.1:0 > "$TMP/server.out" 2> "$TMP/server.log" &
SERVER=$!
for _ in $(seq 100); do grep -q "listening on" "$TMP/server.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.out" | head -1)
"$BIN/vault" login --server "http://127.0.0.1:$PORT" --user bench --server-password-file "$TMP/spw" --password-file "$TMP/pw" > /dev/null
for i in $(seq 50); do printf 'file %s\n' "$i" > "$TMP/f$i"; "$BIN/vault" put "$TMP/f$i" / --password-file "$TMP/pw" > /dev/null; done
"$BIN/vault" sync --password-file "$TMP/pw" > /dev/null

"$BIN/vault" agent 2> "$TMP/agent.log" &
AGENT=$!
"$BIN/vault" unlock --password-file "$TMP/pw" > /dev/null
# status JSON field: python3 -c on `vault agent status --json`.
field() { "$BIN/vault" agent status --json | python3 -c "import json,sys; a=json.load(sys.stdin)['agent']; print(eval(sys.argv[1]))" "$1"; }
for _ in $(seq 100); do [ "$(field "a['events']['connected']")" = True ] && break; sleep 0.1; done
LISTENER=$(field "a['events']['listenerPid']")
sleep 3   # settle: the first sync pass has ended, the push channel is open and idle

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
# private memory (anonymous pages) and PSS (shared library pages divided among their users)
private() { awk '/RssAnon/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
pss() { awk '/^Pss:/ {printf "%.1f", $2/1024}' "/proc/$1/smaps_rollup"; }
HZ=$(getconf CLK_TCK)
A0=$(ticks "$AGENT"); L0=$(ticks "$LISTENER")
sleep "$SECONDS_IDLE"
A1=$(ticks "$AGENT"); L1=$(ticks "$LISTENER")
cpu() { python3 -c "print(f'{($2-$1)/$HZ/$SECONDS_IDLE*100:.3f}')" "$1" "$2"; }

echo "== 1, 2. idle for $SECONDS_IDLE s (unlocked, logged in, push channel open)"
printf '%-36s %8s %% of a core   RSS %6s MiB (anonymous %s MiB, PSS %s MiB)\n' "vault agent (pid $AGENT)" "$(cpu "$A0" "$A1")" "$(rss "$AGENT")" "$(private "$AGENT")" "$(pss "$AGENT")"
printf '%-36s %8s %% of a core   RSS %6s MiB (anonymous %s MiB, PSS %s MiB)\n' "push-channel helper (pid $LISTENER)" "$(cpu "$L0" "$L1")" "$(rss "$LISTENER")" "$(private "$LISTENER")" "$(pss "$LISTENER")"
echo "shared libraries mapped by the agent: $(awk '$6 ~ /\.so/ {print $6}' "/proc/$AGENT/maps" | sort -u | wc -l)"
echo "targets: agent < 0.1 % of a core, agent RSS <= 32 MiB"

# median seconds of RUNS runs of a command (its output discarded).
median() { python3 - "$RUNS" "$@" <<'EOF'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - t)
print(f"{statistics.median(times) * 1000:.1f}")
EOF
}
STATUS_AGENT=$(median "$BIN/vault" status); LS_AGENT=$(median "$BIN/vault" ls /)
"$BIN/vault" agent stop > /dev/null; wait "$AGENT" 2>/dev/null || true; AGENT=""
"$BIN/vault" unlock --password-file "$TMP/pw" > /dev/null   # no agent: the key itself in the keyring item
STATUS_DIRECT=$(median "$BIN/vault" status); LS_DIRECT=$(median "$BIN/vault" ls /)
echo
echo "== 3. command latency, median of $RUNS runs"
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
printf '%-22s %8s ms through the agent   %8s ms direct   ratio %s\n' "vault status" "$STATUS_AGENT" "$STATUS_DIRECT" "$(ratio "$STATUS_AGENT" "$STATUS_DIRECT")"
printf '%-22s %8s ms through the agent   %8s ms direct   ratio %s\n' "vault ls / (50 files)" "$LS_AGENT" "$LS_DIRECT" "$(ratio "$LS_AGENT" "$LS_DIRECT")"
"$BIN/vault" lock > /dev/null
