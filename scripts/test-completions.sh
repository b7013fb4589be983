#!/usr/bin/env bash
# Checks the generated shell completions of `vault` (completions/): the bash one by sourcing it
# and asking it, as bash would on <Tab>, for commands, subcommands, options and option values;
# the zsh and fish ones at least parse (`zsh -n`, `fish -n`, when those shells are installed).
# Run by scripts/test.sh and by CompletionScriptTests; exits non-zero on the first mismatch.
set -uo pipefail
cd "$(dirname "$0")/.."
fails=0

# complete WORD... : the COMPREPLY for the command line "WORD..." with the cursor after the last
# word (an empty last word means "after a space").
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _vault
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# The words of a command line as bash gives them to a completion function: split at blanks, and
# at '=' (COMP_WORDBREAKS), which stands as a word of its own.
split_words() {
    read -r -a argv <<<"${1//=/ = }"
}

# expect "WORDS" "EXPECTED" : the completions must be exactly EXPECTED (sorted, space-separated).
expect() {
    local words="$1" want="$2" got
    split_words "$words"
    [[ "$words" == *" " ]] && argv+=("")
    got=$(complete_words "${argv[@]}")
    if [[ "$got" != "$want" ]]; then
        echo "FAIL: '$words' completes to '$got', expected '$want'"
        fails=$((fails + 1))
    fi
}

# contains "WORDS" "WORD..." : each WORD must be among the completions.
contains() {
    local words="$1"; shift
    split_words "$words"
    [[ "$words" == *" " ]] && argv+=("")
    local got; got=" $(complete_words "${argv[@]}") "
    for w in "$@"; do
        if [[ "$got" != *" $w "* ]]; then echo "FAIL: '$words' does not offer '$w' (got:$got)"; fails=$((fails + 1)); fi
    done
}

# shellcheck source=/dev/null
source completions/vault.bash
if ! complete -p vault >/dev/null 2>&1; then echo "FAIL: completions/vault.bash registers no completion for vault"; exit 1; fi

# Commands and subcommands.
contains "vault " init unlock lock status ls tree put key policy transfers completion help
expect "vault ke" "key"
expect "vault key " "add-escrow add-fido2 add-recovery add-tpm calibrate list passwd reencrypt remove rotate"
expect "vault key add-" "add-escrow add-fido2 add-recovery add-tpm"
expect "vault key add-fido2 --" "--device --help --json --password-file --pin-file"
expect "vault policy " "check show"
expect "vault backup " "export import"
expect "vault transfers " "cancel list pause resume"
expect "vault admin si" "sign-policy"
# Options belong to their command only.
expect "vault key list --" "--help --json --password-file"
expect "vault ls -" "--help --json --long --password-file -h -l"
contains "vault put --" --recursive --replace --json --password-file --help
contains "vault key calibrate --kdf" --kdf --kdf-mem --kdf-ops --kdf-time
expect "vault lock --" "--all --help --json"
contains "vault transfers --" --metered --large-threshold --json
expect "vault sync --p" "--password-file --pinned-only"
expect "vault sync --m" "--max-delete"
contains "vault sync --" --watch --force --allow-metered --concurrency
expect "vault config " "get list set unset"
expect "vault config set " "conflicts device-name"
expect "vault conflicts --" "--clear --help --json --password-file"
contains "vault join --" --server --user --server-password-file --recovery-key-file --ca-file --insecure-http
contains "vault cat --" --revision --password-file
expect "vault restore --r" "--revision"
# Option values: fixed words, and files where the option takes one.
expect "vault init --kdf " "argon2id pbkdf2"
expect "vault init --kdf p" "pbkdf2"
expect "vault init --kdf=" "argon2id pbkdf2"
expect "vault init --kdf=a" "argon2id"
contains "vault init --kdf-time=1 --kdf-" --kdf-mem --kdf-ops
# A shell whose COMP_WORDBREAKS lacks '=': the value after '=' in one word.
COMP_WORDS=(vault init --kdf=pb); COMP_CWORD=2; _vault
[[ "${COMPREPLY[*]}" == "--kdf=pbkdf2" ]] || { echo "FAIL: '--kdf=pb' as one word completes to '${COMPREPLY[*]}'"; fails=$((fails + 1)); }
expect "vault transfers --metered " "auto no yes"
expect "vault completion " "bash fish zsh"
expect "vault key calibrate --kdf pbkdf2 --" "--apply --help --json --kdf --kdf-mem --kdf-ops --kdf-time --password-file --pbkdf2-iterations"
tmp=$(mktemp -d); touch "$tmp/pw-file" "$tmp/other"; mkdir "$tmp/dir"
contains "vault ls --password-file $tmp/pw" "$tmp/pw-file"
contains "vault put $tmp/o" "$tmp/other"
contains "vault admin keygen --out $tmp/d" "$tmp/dir"
expect "vault admin keygen --out $tmp/o" ""
# After an option's value, the command's words again; a value that names a command is not one.
expect "vault ls --json " ""
expect "vault key list --password-file key " ""
contains "vault transfers --metered yes " cancel list pause resume
contains "vault transfers --metered yes --" --json --large-threshold
# After --, only arguments.
expect "vault ls -- --" ""
rm -rf "$tmp"

# zsh and fish: the files parse.
if command -v zsh >/dev/null 2>&1; then
    zsh -n completions/_vault || { echo "FAIL: zsh -n completions/_vault"; fails=$((fails + 1)); }
    # And they load: compinit-free check that the function is defined and dispatches.
    zsh -c 'autoload -U compinit; compinit -u -D 2>/dev/null; source completions/_vault 2>/dev/null; (( $+functions[_vault] && $+functions[_vault_key_list] ))' \
        || { echo "FAIL: completions/_vault does not define _vault and _vault_key_list"; fails=$((fails + 1)); }
else
    echo "skip: zsh is not installed"
fi
if command -v fish >/dev/null 2>&1; then
    fish -n completions/vault.fish || { echo "FAIL: fish -n completions/vault.fish"; fails=$((fails + 1)); }
    got=$(fish -c 'source completions/vault.fish; complete -C "vault key l"' 2>&1 | cut -f1 | tr '\n' ' ')
    [[ "$got" == "list " ]] || { echo "FAIL: fish completes 'vault key l' to '$got'"; fails=$((fails + 1)); }
    got=$(fish -c 'source completions/vault.fish; complete -C "vault init --kdf "' 2>&1 | cut -f1 | sort | tr '\n' ' ')
    [[ "$got" == "argon2id pbkdf2 " ]] || { echo "FAIL: fish completes 'vault init --kdf ' to '$got'"; fails=$((fails + 1)); }
    got=$(fish -c 'source completions/vault.fish; complete -C "vault key list --"' 2>&1 | cut -f1 | sort | tr '\n' ' ')
    [[ "$got" == "--help --json --password-file " ]] || { echo "FAIL: fish completes 'vault key list --' to '$got'"; fails=$((fails + 1)); }
else
    echo "skip: fish is not installed"
fi

if [[ $fails -gt 0 ]]; then echo "$fails completion check(s) failed"; exit 1; fi
echo "completions: every check passed"
