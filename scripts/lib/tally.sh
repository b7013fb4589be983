# Sourced by the check scripts: counts what passed and failed, printing one line for each.
#   ok WHAT | bad WHAT                     record a result
#   check WHAT CMD…                        ok when CMD succeeds
#   refuse WHAT CMD…                       ok when CMD fails (an input that must be refused)
# The script ends with: echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]
PASS=0 FAIL=0
ok()   { PASS=$((PASS + 1)); echo "ok   - $*"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi; }
refuse() { local what=$1; shift; if "$@" >/dev/null 2>&1; then bad "$what (was accepted)"; else ok "$what"; fi; }
