# Sourced by the server benchmarks (bench-server.sh, bench-server-streams.sh) after they set
# SCRATCH: builds vault-server in release mode there and sets BIN to it; makes a throwaway folder
# TMP holding a password file "$TMP/pw", and a trap that stops the server whose pid is in
# SERVER_PID (when set) and removes TMP on exit.
echo "building release…" >&2
swift build -c release --scratch-path "$SCRATCH" --product vault-server >&2
BIN="$SCRATCH/release/vault-server"

TMP=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
printf 'bench-password\n' > "$TMP/pw"
