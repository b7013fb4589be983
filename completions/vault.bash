# bash completion for vault; generated from the command definitions by `vault completion bash`.
# Do not edit: scripts/generate-docs.sh writes it, and a test fails when it differs.

# The subcommands of a command path ("vault key").
_vault_subcommands() {
    case "$1" in
        'vault') echo 'init unlock lock status ls tree mkdir put mv rm cat get pin unpin storage evict doctor key admin policy backup-exclusion backup login join sync conflicts revisions restore config transfers browse mount unmount agent help version completion' ;;
        'vault key') echo 'list add-recovery add-escrow add-tpm add-fido2 remove passwd rotate reencrypt calibrate' ;;
        'vault admin') echo 'keygen recover sign-policy' ;;
        'vault policy') echo 'show check' ;;
        'vault backup-exclusion') echo 'apply remove status' ;;
        'vault backup') echo 'export import' ;;
        'vault config') echo 'list get set unset' ;;
        'vault transfers') echo 'list resume pause cancel' ;;
        'vault agent') echo 'run install uninstall status stop' ;;
    esac
}

# The options of a command path.
_vault_options() {
    case "$1" in
        'vault') echo '--help -h' ;;
        'vault init') echo '--kdf --kdf-time --kdf-ops --kdf-mem --pbkdf2-iterations --org-key --no-backup-exclusion --password-file --json --help -h' ;;
        'vault unlock') echo '--idle --absolute --recovery-key --recovery-key-file --pin-file --no-tpm --no-fido2 --password-file --json --help -h' ;;
        'vault lock') echo '--all --json --help -h' ;;
        'vault status') echo '--password-file --json --help -h' ;;
        'vault ls') echo '--long -l --password-file --json --help -h' ;;
        'vault tree') echo '--password-file --json --help -h' ;;
        'vault mkdir') echo '--parents -p --password-file --json --help -h' ;;
        'vault put') echo '--replace --recursive -r --password-file --json --help -h' ;;
        'vault mv') echo '--password-file --json --help -h' ;;
        'vault rm') echo '--recursive -r --password-file --json --help -h' ;;
        'vault cat') echo '--revision --password-file --help -h' ;;
        'vault get') echo '--force -f --revision --password-file --json --help -h' ;;
        'vault pin') echo '--wait --password-file --json --help -h' ;;
        'vault unpin') echo '--password-file --json --help -h' ;;
        'vault storage') echo '--budget --password-file --json --help -h' ;;
        'vault evict') echo '--password-file --json --help -h' ;;
        'vault doctor') echo '--verify --password-file --json --help -h' ;;
        'vault key') echo '--help -h' ;;
        'vault key list') echo '--password-file --json --help -h' ;;
        'vault key add-recovery') echo '--password-file --json --help -h' ;;
        'vault key add-escrow') echo '--org-key --password-file --json --help -h' ;;
        'vault key add-tpm') echo '--pin --pin-file --pcrs --password-file --json --help -h' ;;
        'vault key add-fido2') echo '--pin-file --device --password-file --json --help -h' ;;
        'vault key remove') echo '--password-file --json --help -h' ;;
        'vault key passwd') echo '--new-password-file --kdf --kdf-time --kdf-ops --kdf-mem --pbkdf2-iterations --password-file --json --help -h' ;;
        'vault key rotate') echo '--pin-file --password-file --json --help -h' ;;
        'vault key reencrypt') echo '--password-file --json --help -h' ;;
        'vault key calibrate') echo '--kdf --kdf-time --kdf-ops --kdf-mem --pbkdf2-iterations --apply --password-file --json --help -h' ;;
        'vault admin') echo '--help -h' ;;
        'vault admin keygen') echo '--out --json --help -h' ;;
        'vault admin recover') echo '--org-key --new-password-file --kdf --kdf-time --kdf-ops --kdf-mem --pbkdf2-iterations --json --help -h' ;;
        'vault admin sign-policy') echo '--signing-key --json --help -h' ;;
        'vault policy') echo '--help -h' ;;
        'vault policy show') echo '--json --help -h' ;;
        'vault policy check') echo '--password-file --json --help -h' ;;
        'vault backup-exclusion') echo '--help -h' ;;
        'vault backup-exclusion apply') echo '--all --json --help -h' ;;
        'vault backup-exclusion remove') echo '--json --help -h' ;;
        'vault backup-exclusion status') echo '--json --help -h' ;;
        'vault backup') echo '--help -h' ;;
        'vault backup export') echo '--passphrase-file --recovery-key-file --kdf-ops --kdf-mem --password-file --json --help -h' ;;
        'vault backup import') echo '--passphrase-file --recovery-key-file --new-password-file --kdf --kdf-time --kdf-ops --kdf-mem --pbkdf2-iterations --json --help -h' ;;
        'vault login') echo '--server --user --server-password-file --ca-file --insecure-http --password-file --json --help -h' ;;
        'vault join') echo '--server --user --server-password-file --ca-file --insecure-http --recovery-key-file --password-file --json --help -h' ;;
        'vault sync') echo '--concurrency --allow-metered --max-delete --force --watch --pinned-only --password-file --json --help -h' ;;
        'vault conflicts') echo '--clear --password-file --json --help -h' ;;
        'vault revisions') echo '--password-file --json --help -h' ;;
        'vault restore') echo '--revision --password-file --json --help -h' ;;
        'vault config') echo '--password-file --json --help -h' ;;
        'vault config list') echo '--password-file --json --help -h' ;;
        'vault config get') echo '--password-file --json --help -h' ;;
        'vault config set') echo '--password-file --json --help -h' ;;
        'vault config unset') echo '--password-file --json --help -h' ;;
        'vault transfers') echo '--metered --large-threshold --password-file --json --help -h' ;;
        'vault transfers list') echo '--metered --large-threshold --password-file --json --help -h' ;;
        'vault transfers resume') echo '--concurrency --allow-metered --metered --large-threshold --password-file --json --help -h' ;;
        'vault transfers pause') echo '--password-file --json --help -h' ;;
        'vault transfers cancel') echo '--password-file --json --help -h' ;;
        'vault browse') echo '--password-file --help -h' ;;
        'vault mount') echo '--read-only --foreground --password-file --help -h' ;;
        'vault unmount') echo '--help -h' ;;
        'vault agent') echo '--help -h' ;;
        'vault agent run') echo '--help -h' ;;
        'vault agent install') echo '--no-start --json --help -h' ;;
        'vault agent uninstall') echo '--json --help -h' ;;
        'vault agent status') echo '--json --help -h' ;;
        'vault agent stop') echo '--json --help -h' ;;
        'vault help') echo '--man --help -h' ;;
        'vault version') echo '--json --help -h' ;;
        'vault completion') echo '--help -h' ;;
    esac
}

# Completes the value of option $2 of command path $1; fails when $2 takes no value.
_vault_value() {
    case "$1 $2" in
        'vault init --kdf') COMPREPLY=( $(compgen -W 'argon2id pbkdf2' -- "$cur") ) ;;
        'vault init --kdf-time') COMPREPLY=() ;;
        'vault init --kdf-ops') COMPREPLY=() ;;
        'vault init --kdf-mem') COMPREPLY=() ;;
        'vault init --pbkdf2-iterations') COMPREPLY=() ;;
        'vault init --org-key') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault init --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault unlock --idle') COMPREPLY=() ;;
        'vault unlock --absolute') COMPREPLY=() ;;
        'vault unlock --recovery-key-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault unlock --pin-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault unlock --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault status --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault ls --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault tree --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault mkdir --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault put --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault mv --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault rm --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault cat --revision') COMPREPLY=() ;;
        'vault cat --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault get --revision') COMPREPLY=() ;;
        'vault get --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault pin --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault unpin --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault storage --budget') COMPREPLY=() ;;
        'vault storage --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault evict --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault doctor --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key list --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-recovery --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-escrow --org-key') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-escrow --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-tpm --pin-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-tpm --pcrs') COMPREPLY=() ;;
        'vault key add-tpm --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-fido2 --pin-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-fido2 --device') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key add-fido2 --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key remove --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key passwd --new-password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key passwd --kdf') COMPREPLY=( $(compgen -W 'argon2id pbkdf2' -- "$cur") ) ;;
        'vault key passwd --kdf-time') COMPREPLY=() ;;
        'vault key passwd --kdf-ops') COMPREPLY=() ;;
        'vault key passwd --kdf-mem') COMPREPLY=() ;;
        'vault key passwd --pbkdf2-iterations') COMPREPLY=() ;;
        'vault key passwd --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key rotate --pin-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key rotate --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key reencrypt --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault key calibrate --kdf') COMPREPLY=( $(compgen -W 'argon2id pbkdf2' -- "$cur") ) ;;
        'vault key calibrate --kdf-time') COMPREPLY=() ;;
        'vault key calibrate --kdf-ops') COMPREPLY=() ;;
        'vault key calibrate --kdf-mem') COMPREPLY=() ;;
        'vault key calibrate --pbkdf2-iterations') COMPREPLY=() ;;
        'vault key calibrate --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault admin keygen --out') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        'vault admin recover --org-key') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault admin recover --new-password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault admin recover --kdf') COMPREPLY=( $(compgen -W 'argon2id pbkdf2' -- "$cur") ) ;;
        'vault admin recover --kdf-time') COMPREPLY=() ;;
        'vault admin recover --kdf-ops') COMPREPLY=() ;;
        'vault admin recover --kdf-mem') COMPREPLY=() ;;
        'vault admin recover --pbkdf2-iterations') COMPREPLY=() ;;
        'vault admin sign-policy --signing-key') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault policy check --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup export --passphrase-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup export --recovery-key-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup export --kdf-ops') COMPREPLY=() ;;
        'vault backup export --kdf-mem') COMPREPLY=() ;;
        'vault backup export --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup import --passphrase-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup import --recovery-key-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup import --new-password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault backup import --kdf') COMPREPLY=( $(compgen -W 'argon2id pbkdf2' -- "$cur") ) ;;
        'vault backup import --kdf-time') COMPREPLY=() ;;
        'vault backup import --kdf-ops') COMPREPLY=() ;;
        'vault backup import --kdf-mem') COMPREPLY=() ;;
        'vault backup import --pbkdf2-iterations') COMPREPLY=() ;;
        'vault login --server') COMPREPLY=() ;;
        'vault login --user') COMPREPLY=() ;;
        'vault login --server-password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault login --ca-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault login --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault join --server') COMPREPLY=() ;;
        'vault join --user') COMPREPLY=() ;;
        'vault join --server-password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault join --ca-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault join --recovery-key-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault join --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault sync --concurrency') COMPREPLY=() ;;
        'vault sync --max-delete') COMPREPLY=() ;;
        'vault sync --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault conflicts --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault revisions --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault restore --revision') COMPREPLY=() ;;
        'vault restore --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault config --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault config list --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault config get --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault config set --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault config unset --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault transfers --metered') COMPREPLY=( $(compgen -W 'yes no auto' -- "$cur") ) ;;
        'vault transfers --large-threshold') COMPREPLY=() ;;
        'vault transfers --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault transfers list --metered') COMPREPLY=( $(compgen -W 'yes no auto' -- "$cur") ) ;;
        'vault transfers list --large-threshold') COMPREPLY=() ;;
        'vault transfers list --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault transfers resume --concurrency') COMPREPLY=() ;;
        'vault transfers resume --metered') COMPREPLY=( $(compgen -W 'yes no auto' -- "$cur") ) ;;
        'vault transfers resume --large-threshold') COMPREPLY=() ;;
        'vault transfers resume --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault transfers pause --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault transfers cancel --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault browse --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        'vault mount --password-file') compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) return 1 ;;
    esac
}

# Completes positional argument number $2 (from 0) of command path $1.
_vault_positional() {
    case "$1" in
        'vault ls')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault tree')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault mkdir')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault put')
            case $2 in
                0) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
                1) COMPREPLY=() ;;
            esac ;;
        'vault mv')
            case $2 in
                0) COMPREPLY=() ;;
                1) COMPREPLY=() ;;
            esac ;;
        'vault rm')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault cat')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault get')
            case $2 in
                0) COMPREPLY=() ;;
                1) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
            esac ;;
        'vault pin')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault unpin')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault evict')
            case $2 in
                *) COMPREPLY=() ;;
            esac ;;
        'vault key remove')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault admin sign-policy')
            case $2 in
                0) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
            esac ;;
        'vault backup export')
            case $2 in
                0) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
            esac ;;
        'vault backup import')
            case $2 in
                0) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
            esac ;;
        'vault revisions')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault restore')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault config get')
            case $2 in
                0) COMPREPLY=( $(compgen -W 'conflicts device-name' -- "$cur") ) ;;
            esac ;;
        'vault config set')
            case $2 in
                0) COMPREPLY=( $(compgen -W 'conflicts device-name' -- "$cur") ) ;;
                1) COMPREPLY=() ;;
            esac ;;
        'vault config unset')
            case $2 in
                0) COMPREPLY=( $(compgen -W 'conflicts device-name' -- "$cur") ) ;;
            esac ;;
        'vault transfers resume')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault transfers pause')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault transfers cancel')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault browse')
            case $2 in
                0) COMPREPLY=() ;;
            esac ;;
        'vault mount')
            case $2 in
                0) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
            esac ;;
        'vault unmount')
            case $2 in
                0) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
            esac ;;
        'vault help')
            case $2 in
                *) COMPREPLY=() ;;
            esac ;;
        'vault completion')
            case $2 in
                0) COMPREPLY=( $(compgen -W 'bash zsh fish' -- "$cur") ) ;;
            esac ;;
    esac
}

_vault() {
    local cur="${COMP_WORDS[COMP_CWORD]}" path="vault" word i skip=0 words=0 only=0 cword=$COMP_CWORD
    # bash splits `--opt=value` at '=' (COMP_WORDBREAKS): complete the value of the option before it.
    if [[ "$cur" == "=" ]]; then cur=""; fi
    local opt=""
    if [[ "${COMP_WORDS[cword]}" == "=" ]]; then opt="${COMP_WORDS[cword-1]}"
    elif (( cword > 1 )) && [[ "${COMP_WORDS[cword-1]}" == "=" ]]; then opt="${COMP_WORDS[cword-2]}"; fi
    for (( i = 1; i < cword; i++ )); do
        word="${COMP_WORDS[i]}"
        if (( skip )); then skip=0; continue; fi
        if (( only )); then words=$((words + 1)); continue; fi
        if [[ "$word" == "=" ]]; then skip=1; continue; fi
        if [[ "$word" == "--" ]]; then only=1; continue; fi
        if [[ "$word" == -* ]]; then
            if [[ "${COMP_WORDS[i+1]}" != "=" ]] && _vault_value "$path" "$word" >/dev/null 2>&1; then skip=1; fi
            continue
        fi
        if (( words == 0 )) && [[ " $(_vault_subcommands "$path") " == *" $word "* ]]; then
            path="$path $word"
            continue
        fi
        words=$((words + 1))
    done
    COMPREPLY=()
    if [[ -n "$opt" ]]; then _vault_value "$path" "$opt"; return 0; fi
    # `--opt=value` as one word (a COMP_WORDBREAKS without '='): complete the value after '='.
    if (( ! only )) && [[ "$cur" == --*=* ]]; then
        opt="${cur%%=*}"; cur="${cur#*=}"
        _vault_value "$path" "$opt" || return 0
        local k; for k in "${!COMPREPLY[@]}"; do COMPREPLY[k]="$opt=${COMPREPLY[k]}"; done
        return 0
    fi
    if (( skip )); then _vault_value "$path" "${COMP_WORDS[cword-1]}"; return 0; fi
    if (( ! only )) && [[ "$cur" == -* ]]; then
        COMPREPLY=( $(compgen -W "$(_vault_options "$path")" -- "$cur") )
        return 0
    fi
    local subs
    subs="$(_vault_subcommands "$path")"
    if (( words == 0 )) && [[ -n "$subs" ]]; then
        COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
        return 0
    fi
    _vault_positional "$path" "$words"
    return 0
}

complete -F _vault vault
