import VaultArguments

/// The root of the `vault` command tree: every command, and the manual's sections.
struct VaultProgram: ParsableCommand {
    static let version = "0.1.0"

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "vault",
            abstract: "an encrypted offline vault for your cloud drive",
            discussion: """
            vault keeps a user's files sealed on this device (a SQLCipher database and AES-256-GCM \
            content blobs under a password-derived master key; plaintext never touches the disk) and \
            syncs them with a vault-server. `vault unlock` holds the key in the desktop keyring until \
            an idle or absolute timeout; each command then opens the vault without asking again.

            Each command takes the options listed under it, and -h or --help. Commands with a result \
            take --json (one JSON document on standard output, described in docs/json.md; errors \
            too). Commands that open the vault take --password-file FILE; otherwise the password \
            comes from VAULT_PASSWORD_COMMAND, the keyring session, or the terminal (no echo). An \
            option given to a command that does not take it is a usage error (exit 2).
            """,
            version: version,
            subcommands: [
                InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self,
                LsCommand.self, TreeCommand.self, MkdirCommand.self, PutCommand.self, MvCommand.self, RmCommand.self,
                CatCommand.self, GetCommand.self, PinCommand.self, UnpinCommand.self,
                StorageCommand.self, EvictCommand.self, DoctorCommand.self,
                KeyCommand.self, AdminCommand.self, PolicyCommand.self, BackupExclusionCommand.self, BackupCommand.self,
                LoginCommand.self, JoinCommand.self, SyncCommand.self, ConflictsCommand.self, RevisionsCommand.self, RestoreCommand.self,
                ConfigCommand.self, TransfersCommand.self, BrowseCommand.self, MountCommand.self, UnmountCommand.self, AgentCommand.self,
                HelpCommand.self, VersionCommand.self, CompletionCommand.self,
            ],
            sections: [
                ManualSection(title: "Environment", items: [
                    ("VAULT_HOME", "The vault's folder (default: $XDG_DATA_HOME/vault, that is ~/.local/share/vault)."),
                    ("XDG_DATA_HOME, XDG_CONFIG_HOME", "Where the vault and the user's settings (vault/settings.json) live when VAULT_HOME is not set."),
                    ("VAULT_PASSWORD_COMMAND", "A shell command whose first line of output is the vault password (used when --password-file is not given)."),
                    ("VAULT_NO_KEYRING", "1: do not use the Secret Service; every command asks for the password (reduced security, said on each command)."),
                    ("VAULT_POLICY_FILE", "The system policy file (default: /etc/vault/policy.json)."),
                    ("VAULT_METERED", "1 or 0: treat the network as metered or not, whatever NetworkManager says."),
                    ("VAULT_BACKGROUND_DOWNLOADS", "0: `vault pin` never starts a background download."),
                    ("VAULT_LOCK_TIMEOUT", "Seconds to wait for another vault command to finish (default 5)."),
                    ("NO_COLOR", "Set: no colour in output (also when TERM is dumb or output is not a terminal)."),
                ]),
                ManualSection(title: "Files", items: [
                    ("$VAULT_HOME/keyslots", "The wrapped master keys (password, recovery and escrow slots)."),
                    ("$VAULT_HOME/metadata.db", "The SQLCipher metadata database: the tree, the outbox, sync state."),
                    ("$VAULT_HOME/cache, $VAULT_HOME/staging", "Sealed content blobs: downloaded (evictable), and awaiting upload (never evicted)."),
                    ("$XDG_CONFIG_HOME/vault/settings.json", "The user's settings, in the policy's shape."),
                    ("/etc/vault/policy.json, /etc/vault/org-signing.pub", "The organisation's policy and the key that signs it (policy.json.sig)."),
                ]),
                ManualSection(title: "Exit status", items: [
                    ("0", "Success."),
                    ("1", "An I/O or internal error."),
                    ("2", "A usage error: an unknown or misplaced option, a missing or malformed value."),
                    ("3", "Locked, a wrong password, or the session expired (auto-lock)."),
                    ("4", "Not found, or no vault here."),
                    ("5", "Already exists, a name collision, an invalid name, or a conflicting operation."),
                    ("6", "An integrity failure: tampered or damaged data."),
                    ("7", "Busy: another vault command holds the vault."),
                    ("8", "Not enough free space."),
                    ("9", "Insecure: vault files writable by other users."),
                    ("10", "The content is not on this device and cannot be downloaded now."),
                    ("11", "Forbidden by policy, not compliant, or the policy itself is invalid."),
                ]),
                ManualSection(title: "See also", paragraphs: [
                    "vault-server(8); docs/json.md for the --json results; README.md, SECURITY.md and docs/ in the source tree.",
                ]),
            ])
    }
}
