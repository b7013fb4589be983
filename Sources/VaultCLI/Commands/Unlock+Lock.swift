import Foundation
import VaultArguments
import VaultCore
import VaultCrypto
import VaultSync
import VaultAgent

/// `vault unlock`: check the password (or the recovery key) and hold the key in the keyring.
struct UnlockCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "unlock", abstract: "check the password (or recovery key) and hold the key in the keyring (auto-locks after 15m idle / 8h)",
                             discussion: "Without a Secret Service the password is checked and each later command asks for it again. The policy may cap both timeouts; the message says what the session got.")
    }

    @Option(help: "lock after this much time without a vault command (0: never)", valueName: "duration")
    var idle: TimeSpan?
    @Option(help: "lock this long after unlocking, used or not (0: never)", valueName: "duration")
    var absolute: TimeSpan?
    @Flag(help: "unlock with the recovery key (asked on the terminal) instead of the password")
    var recoveryKey = false
    @Option(help: "read the recovery key from FILE (implies --recovery-key)", valueName: "file", completion: .file)
    var recoveryKeyFile: String?
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if password.passwordFile != nil && (recoveryKey || recoveryKeyFile != nil) {
            throw ValidationError("--password-file and --recovery-key go separately: unlock with one or the other")
        }
    }

    struct Result: Encodable {
        var ok = true
        var keyring: String
        var message: String
        var idleTimeout: Int64?
        var absoluteTimeout: Int64?
    }

    func run(_ ctx: CommandContext) throws {
        let idle = idle?.seconds ?? VaultSessions.defaultIdleTimeout
        let absolute = absolute?.seconds ?? VaultSessions.defaultAbsoluteTimeout
        _ = try Vault.readKeyslots(ctx.layout)
        let held: Bool
        var rekeyed: String?
        // A vault that syncs: a key rotated on another device is caught up here (SECURITY.md "Envelope").
        func catchUp(_ password: SecureBytes?, _ recovery: SecureBytes?) -> (Vault) throws -> Void {
            { vault in
                rekeyed = try SyncClient.catchUpRotation(vault: vault, policy: ctx.policy, password: password,
                                                         recoveryKey: try recovery.map(RecoveryKey.parse), say: { ctx.out.note($0) })
            }
        }
        if recoveryKey || recoveryKeyFile != nil {
            let typed = try recoveryKeyFile.map { try PasswordInput.fromFile($0) } ?? PasswordInput.fromTerminal("Recovery key: ")
            held = try ctx.sessions.unlock(recoveryKey: typed, idleTimeout: idle, absoluteTimeout: absolute, opened: catchUp(nil, typed))
        } else {
            let pw = try ctx.password.read("Password for the vault at \(ctx.layout.root): ")
            held = try ctx.sessions.unlock(password: pw, idleTimeout: idle, absoluteTimeout: absolute, opened: catchUp(pw, nil))
        }
        if let rekeyed { ctx.out.note(rekeyed) }
        if !SecureBytes.memoryLockingAvailable { ctx.out.warn(ctx.sessions.degradations.last ?? "") }
        // What the session really got: the policy may cap what was asked.
        let limits = ctx.sessions.effectiveTimeouts(idle: idle, absolute: absolute)
        func shown(_ got: Int64, _ asked: Int64) -> String {
            (got > 0 ? Duration.describe(got) : "no") + (got != asked ? " (the policy's maximum; \(asked > 0 ? Duration.describe(asked) : "none") was asked)" : "")
        }
        let agent = held && ctx.agent() != nil
        let msg = !held ? "Correct, but with no keyring each command will ask for the password again."
            : agent ? "Unlocked: the vault agent holds the session (the keyring holds the key sealed under the agent's own key), and locks it after \(shown(limits.idle, idle)) idle time, \(shown(limits.absolute, absolute)) absolute limit."
            : "Unlocked: the key is held in the keyring (locks after \(shown(limits.idle, idle)) idle time, \(shown(limits.absolute, absolute)) absolute limit; checked at the next command: no `vault agent` runs)."
        if ctx.out.json {
            try ctx.out.emit(Result(keyring: held ? "held" : "unavailable", message: msg,
                                    idleTimeout: held ? limits.idle : nil, absoluteTimeout: held ? limits.absolute : nil))
        } else { ctx.out.line(msg) }
    }
}

/// `vault lock`: remove the key from the keyring.
struct LockCommand: VaultCommand, ProducesJSON {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "lock", abstract: "remove the key from the keyring (--all: every vault of this user, through their agents too)")
    }

    @Flag(help: "lock every vault of this user: each running agent, and every session item in the keyring")
    var all = false
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var ok = true
        var message: String
        /// True when a session was held and is now gone; false when the vault was already locked.
        var removed: Bool
    }

    func run(_ ctx: CommandContext) throws {
        if all {
            let viaAgents = AgentClient.lockAll(environment: ctx.environment)
            let cleared = ctx.sessions.keyringAvailability.available ? try KeyringSession.clearAll() : false
            let msg = viaAgents > 0 || cleared ? "Locked every vault of this user (\(viaAgents) through its agent)." : "Every vault was already locked."
            if ctx.out.json { try ctx.out.emit(Result(message: msg, removed: viaAgents > 0 || cleared)) } else { ctx.out.line(msg) }
            return
        }
        let removed = try ctx.sessions.lock()
        let msg = removed ? "Locked: the key was removed from the keyring." : "Already locked."
        if ctx.out.json { try ctx.out.emit(Result(message: msg, removed: removed)) } else { ctx.out.line(msg) }
    }
}
