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
                             discussion: "When this machine's TPM holds a keyslot of the vault (`vault key add-tpm`), it is tried first: with no PIN nothing is asked; with one, the PIN (or --pin-file). FIDO2 slots (`vault key add-fido2`) come next: touch the security key (and its PIN when the slot was enrolled with it). If no hardware slot opens the vault, one line says why and the password is asked. A password named for the command (--password-file, VAULT_PASSWORD_COMMAND) is used as before, without the TPM, unless --pin-file is given too; --no-tpm never asks the TPM, --no-fido2 never the security key. Without a Secret Service the password is checked and each later command asks for it again. The policy may cap both timeouts; the message says what the session got.")
    }

    @Option(help: "lock after this much time without a vault command (0: never)", valueName: "duration")
    var idle: TimeSpan?
    @Option(help: "lock this long after unlocking, used or not (0: never)", valueName: "duration")
    var absolute: TimeSpan?
    @Flag(help: "unlock with the recovery key (asked on the terminal) instead of the password")
    var recoveryKey = false
    @Option(help: "read the recovery key from FILE (implies --recovery-key)", valueName: "file", completion: .file)
    var recoveryKeyFile: String?
    @Option(help: "read the TPM slot's or the FIDO2 key's PIN from the first line of FILE (the hardware slots are then tried first even with --password-file)",
            valueName: "file", completion: .file)
    var pinFile: String?
    @Flag(help: "do not try the TPM slot: unlock with the password (or recovery key)")
    var noTpm = false
    @Flag(help: "do not try the FIDO2 slots (no touch): unlock with the password (or recovery key)")
    var noFido2 = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if password.passwordFile != nil && (recoveryKey || recoveryKeyFile != nil) {
            throw ValidationError("--password-file and --recovery-key go separately: unlock with one or the other")
        }
        if pinFile != nil && ((noTpm && noFido2) || recoveryKey || recoveryKeyFile != nil) {
            throw ValidationError("--pin-file is for the TPM or FIDO2 slot: it goes without --no-tpm --no-fido2 and --recovery-key")
        }
    }

    struct Result: Encodable {
        var ok = true
        var keyring: String
        var message: String
        var idleTimeout: Int64?
        var absoluteTimeout: Int64?
        /// "tpm2" or "fido2" when a hardware slot opened the vault (absent: the password or recovery key).
        var unlockedWith: String?
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
        /// A hardware slot opens this device's key; a newer one rotated elsewhere needs a password.
        func catchUpHardware(_ what: String, _ flag: String) -> (Vault) throws -> Void {
            { vault in
                do { try catchUp(nil, nil)(vault) } catch let e as VaultError where e.kind == .usage {
                    throw VaultError(.locked, "the vault key was rotated on another device; the \(what) slot holds this device's older key",
                                     hint: "run `vault unlock \(flag)` with the password this once to catch up, then enroll the slot again")
                }
            }
        }
        var via: String?
        var viaTPM = try unlockWithTPM(ctx, idle: idle, absolute: absolute, opened: catchUpHardware("TPM", "--no-tpm --no-fido2"))
        if viaTPM != nil { via = KeyslotFile.tpm2Type } else {
            viaTPM = try unlockWithFIDO2(ctx, idle: idle, absolute: absolute, opened: catchUpHardware("FIDO2", "--no-tpm --no-fido2"))
            if viaTPM != nil { via = KeyslotFile.fido2Type }
        }
        if let viaTPM {
            held = viaTPM
        } else if recoveryKey || recoveryKeyFile != nil {
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
        let msg = (via == KeyslotFile.tpm2Type ? "This machine's TPM opened the vault. " : via == KeyslotFile.fido2Type ? "The FIDO2 security key opened the vault. " : "")
            + (!held ? "Correct, but with no keyring each command will ask for the password again."
            : agent ? "Unlocked: the vault agent holds the session (the keyring holds the key sealed under the agent's own key), and locks it after \(shown(limits.idle, idle)) idle time, \(shown(limits.absolute, absolute)) absolute limit."
            : "Unlocked: the key is held in the keyring (locks after \(shown(limits.idle, idle)) idle time, \(shown(limits.absolute, absolute)) absolute limit; checked at the next command: no `vault agent` runs).")
        if ctx.out.json {
            try ctx.out.emit(Result(keyring: held ? "held" : "unavailable", message: msg,
                                    idleTimeout: held ? limits.idle : nil, absoluteTimeout: held ? limits.absolute : nil,
                                    unlockedWith: via))
        } else { ctx.out.line(msg) }
    }
}

extension UnlockCommand {
    /// Tries this machine's TPM slot unless the command asks for another way in; returns whether
    /// the key is held when it opened the vault, nil to go on with the password (after one line
    /// saying why, when the slot did not open it).
    func unlockWithTPM(_ ctx: CommandContext, idle: Int64, absolute: Int64, opened: (Vault) throws -> Void) throws -> Bool? {
        guard !noTpm, hardwareFirst(ctx) else { return nil }
        return try fallingBack(ctx, "TPM", fido2Next: !noFido2 && !(try Vault.readKeyslots(ctx.layout).0.fido2Slots.isEmpty),
                               try ctx.sessions.unlock(tpm: Vault.tpmConfiguration(ctx.environment), pin: pinSource,
                                                       idleTimeout: idle, absoluteTimeout: absolute, opened: opened))
    }

    /// Tries the FIDO2 slots with the plugged-in security key (a touch) as `unlockWithTPM` tries
    /// the TPM slot.
    func unlockWithFIDO2(_ ctx: CommandContext, idle: Int64, absolute: Int64, opened: (Vault) throws -> Void) throws -> Bool? {
        guard !noFido2, hardwareFirst(ctx) else { return nil }
        return try fallingBack(ctx, "FIDO2", fido2Next: false,
                               try ctx.sessions.unlock(fido2: FIDO2Source(environment: ctx.environment), pin: pinSource, touch: { ctx.out.note($0) },
                                                       idleTimeout: idle, absoluteTimeout: absolute, opened: opened))
    }

    /// Whether the hardware slots are tried: not for the recovery key, nor for a password named
    /// for the command (a script's), unless --pin-file is given too.
    func hardwareFirst(_ ctx: CommandContext) -> Bool {
        !recoveryKey && recoveryKeyFile == nil && (pinFile != nil || !ctx.password.isExplicit)
    }

    /// Where a hardware slot's PIN comes from: --pin-file, else the terminal.
    var pinSource: PasswordSource {
        pinFile.map { f in PasswordSource(isExplicit: true) { _ in try PasswordInput.fromFile(f, option: "--pin-file") } }
            ?? PasswordSource(isExplicit: false) { try PasswordInput.fromTerminal($0) }
    }

    /// Whether the key is held (the slot opened the vault), or nil to go on (with the next
    /// hardware slot when `fido2Next`, else the password) after one line saying why.
    func fallingBack(_ ctx: CommandContext, _ what: String, fido2Next: Bool, _ result: HardwareUnlock) throws -> Bool? {
        switch result {
        case .unlocked(let held): return held
        case .noSlot: return nil
        case .fellBack(let why):
            if fido2Next { ctx.out.warn("\(what) slot not used: \(why.message); trying the FIDO2 slots"); return nil }
            if ctx.policy.requireHardwareKey.value == true {
                throw VaultError(.policy, "the \(what) slot did not open the vault (\(why.message)), and the policy requires a hardware key (requireHardwareKey): the password does not unlock it",
                                 hint: "fix what the \(what == "TPM" ? "TPM" : "security key") said, or unlock with the recovery key (`vault unlock --recovery-key`)")
            }
            if !ctx.password.isExplicit && !PasswordInput.terminalAvailable {
                throw VaultError(why.kind == .integrity ? .integrity : .locked,
                                 "the \(what) slot did not open the vault (\(why.message)), and there is no terminal to ask for the password",
                                 hint: "pass --password-file FILE")
            }
            ctx.out.warn("\(what) slot not used: \(why.message); unlocking with the password")
            return nil
        }
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
