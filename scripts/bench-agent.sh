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
  [ -n "${VAULT_BENCH_BIN:-}" ] || for product in vault vault-agent vault-server; do
    swift build -c release --product "$product" 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
  done
  VAULT_BENCH_IN_SESSION=1 exec dbus-run-session -- scripts/with-keyring.sh "$0" "$@"
fi
SECONDS_IDLE=${1:-60}
RUNS=${2:-20}
BIN=${VAULT_BENCH_BIN:-$(swift build -c release --show-bin-path)}
TMP=$(mktemp -d /tmp/vault-bench-agent.XXXXXX)
SERVER=""; AGENT=""
cleanup() {
  for p in $AGENT $SERVER; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
export NO_COLOR=1
printf 'bench password\n' > "$TMP/pw"; printf 'server password\n' > "$TMP/spw"
# One account per vault: an account holds one vault (a second device would `vault join` it).
for v in A B; do "$BIN/vault-server" user add "bench$v" --data "$TMP/server" --password-file "$TMP/spw" > /dev/null; done
"$BIN/vault-server" serve --data "$TMP/server" --listen 127.0.0.1:0 > "$TMP/server.out" 2> "$TMP/server.log" &
SERVER=$!
for _ in $(seq 100); do grep -q "listening on" "$TMP/server.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.out" | head -1)
# Two equal vaults: A gets the agent, B is used directly (the key itself in its keyring item).
for v in A B; do
  export VAULT_HOME="$TMP/vault$v"
  "$BIN/vault" init --password-file "$TMP/pw" --kdf-ops 1 --kdf-mem 8M > /dev/null
  "$BIN/vault" login --server "http://127.0.0.1:$PORT" --user "bench$v" --server-password-file "$TMP/spw" --password-file "$TMP/pw" > /dev/null
  for i in $(seq 50); do printf 'file %s\n' "$i" > "$TMP/f$i"; "$BIN/vault" put "$TMP/f$i" /$v$i --password-file "$TMP/pw" > /dev/null; done
  "$BIN/vault" sync --password-file "$TMP/pw" > /dev/null 2>&1
done
VAULT_HOME="$TMP/vaultB" "$BIN/vault" unlock --password-file "$TMP/pw" > /dev/null
export VAULT_HOME="$TMP/vaultA"

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
libs() { awk '$6 ~ /\.so/ {print $6}' "/proc/$1/maps" | sort -u | wc -l; }
HZ=$(getconf CLK_TCK)
A0=$(ticks "$AGENT"); L0=$(ticks "$LISTENER")
sleep "$SECONDS_IDLE"
A1=$(ticks "$AGENT"); L1=$(ticks "$LISTENER")
cpu() { python3 -c "print(f'{($2-$1)/$HZ/$SECONDS_IDLE*100:.3f}')" "$1" "$2"; }

echo "== 1, 2. idle for $SECONDS_IDLE s (unlocked, logged in, push channel open)"
printf '%-36s %8s %% of a core   RSS %6s MiB (anonymous %s MiB, PSS %s MiB)\n' "vault agent (pid $AGENT)" "$(cpu "$A0" "$A1")" "$(rss "$AGENT")" "$(private "$AGENT")" "$(pss "$AGENT")"
printf '%-36s %8s %% of a core   RSS %6s MiB (anonymous %s MiB, PSS %s MiB)\n' "push-channel helper (pid $LISTENER)" "$(cpu "$L0" "$L1")" "$(rss "$LISTENER")" "$(private "$LISTENER")" "$(pss "$LISTENER")"
echo "the agent runs $(readlink "/proc/$AGENT/exe"); shared libraries mapped: agent $(libs "$AGENT"), helper $(libs "$LISTENER")"
echo "PSS of agent + helper: $(python3 -c "print(f'{$(pss "$AGENT") + $(pss "$LISTENER"):.1f}')") MiB (the physical memory they use; RSS counts shared pages in full)"
echo "targets: agent < 0.1 % of a core, agent RSS <= 32 MiB"
echo "the agent's RSS by mapped file (MiB; [anon] is its own memory):"
awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anon]" : $6) } /^Rss:/ { r[name] += $2 }
     END { for (n in r) if (r[n] >= 256) printf "%8.1f  %s\n", r[n] / 1024, n }' "/proc/$AGENT/smaps" | sort -rn

# Medians of RUNS runs of each command on A (through the agent) and B (direct), interleaved so
# that the load of a shared machine falls on both alike.
echo
echo "== 3. command latency, median of $RUNS interleaved runs"
python3 - "$RUNS" "$BIN/vault" "$TMP/vaultA" "$TMP/vaultB" <<'EOF'
import os, statistics, subprocess, sys, time
runs, vault, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def once(home, args):
    env = dict(os.environ, VAULT_HOME=home)
    t = time.perf_counter()
    subprocess.run([vault] + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t
for label, args in (("vault status", ["status"]), ("vault ls / (50 files)", ["ls", "/"])):
    ta, tb = [], []
    for _ in range(runs):
        ta.append(once(a, args)); tb.append(once(b, args))
    ma, mb = statistics.median(ta) * 1000, statistics.median(tb) * 1000
    print(f"{label:<22} {ma:8.1f} ms through the agent   {mb:8.1f} ms direct   ratio {ma / mb:.2f}x")
EOF
"$BIN/vault" lock --all > /dev/null
