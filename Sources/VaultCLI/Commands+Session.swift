import Foundation
import VaultCore
import VaultCrypto
import VaultSync
import VaultAgent

extension VaultCommandLine {
    static let sessionCommands: [Command] = [
        Command(name: "init", usage: "vault init [--kdf argon2id|pbkdf2] [--kdf-time SECONDS] [--kdf-ops N --kdf-mem SIZE] [--pbkdf2-iterations N] [--org-key FILE] [--no-backup-exclusion]",
                summary: "create a new vault with a password slot (and an escrow slot with --org-key)",
                valued: ["kdf", "kdf-time", "kdf-ops", "kdf-mem", "pbkdf2-iterations", "org-key"],
                flags: ["no-backup-exclusion"], run: runInit),
        Command(name: "unlock", usage: "vault unlock [--idle DURATION] [--absolute DURATION] [--recovery-key [--recovery-key-file F]]",
                summary: "check the password (or recovery key) and hold the key in the keyring (auto-locks after 15m idle / 8h)",
                valued: ["idle", "absolute", "recovery-key-file"], flags: ["recovery-key"], run: runUnlock),
        Command(name: "lock", usage: "vault lock [--all]", summary: "remove the key from the keyring (--all: every vault of this user, through their agents too)",
                flags: ["all"], run: runLock),
        Command(name: "status", usage: "vault status [--json]", summary: "show the vault, its lock state and what awaits sync", run: runStatus),
    ]

    /// KDF parameters from the options, calibrated where not given, never below the policy floor.
    /// `algorithm` is the one to use when `--kdf` does not name one (default: Argon2id, or PBKDF2
    /// under a `pbkdf2Only` policy).
    /// Parameters a keyslot could not hold (a reader refuses them) are refused: options outside
    /// the bounds as a usage error, a policy floor above them as a policy error.
    static func kdfParameters(_ a: Arguments, policy: EffectivePolicy = .none, algorithm: String? = nil) throws -> KDFParameters {
        let params = try requestedKDF(a, policy: policy, algorithm: algorithm)
        try policy.checkKDF(params)
        if let problem = params.storageProblem {
            throw VaultError(.policy, "the policy's KDF floor asks for more than a keyslot can hold (\(problem))",
                             hint: "ask your administrator to lower kdfMinArgon2Ops, kdfMinArgon2MemoryBytes or kdfMinPBKDF2Iterations")
        }
        return params
    }

    /// Whether any KDF option was given.
    static func kdfAsked(_ a: Arguments) -> Bool {
        ["kdf", "kdf-time", "kdf-ops", "kdf-mem", "pbkdf2-iterations"].contains { a.values[$0] != nil }
    }

    static func requestedKDF(_ a: Arguments, policy: EffectivePolicy, algorithm: String? = nil) throws -> KDFParameters {
        let argonAsked = a.values["kdf-ops"] != nil || a.values["kdf-mem"] != nil
        let alg = a.values["kdf"] ?? algorithm ?? (policy.pbkdf2Only.value == true && !argonAsked ? "pbkdf2" : "argon2id")
        switch alg {
        case "argon2id":
            let mem = try kdfMemory(a)
            if let ops = a.values["kdf-ops"] {
                let r = KDFParameters.argon2idOpsRange
                guard let o = UInt64(ops), r.contains(o) else {
                    throw VaultError(.usage, "--kdf-ops must be a whole number from \(r.lowerBound) to \(r.upperBound)")
                }
                return .argon2id(opsLimit: o, memLimitBytes: mem ?? (64 << 20), salt: SecureRandom.bytes(16))
            }
            let t = try a.values["kdf-time"].map { v -> Double in
                guard let d = Double(v), d > 0, d <= 60 else { throw VaultError(.usage, "--kdf-time must be seconds between 0 and 60") }
                return d
            } ?? 0.5
            return KDF.calibrateArgon2id(targetSeconds: t, memLimitBytes: max(mem ?? (64 << 20), policy.kdfMinArgon2MemoryBytes.value ?? 0),
                                         minOpsLimit: max(2, policy.kdfMinArgon2Ops.value ?? 0))
        case "pbkdf2", "pbkdf2-sha512":
            if let it = a.values["pbkdf2-iterations"] {
                let r = KDFParameters.pbkdf2IterationsRange
                guard let i = UInt32(it), r.contains(i) else {
                    throw VaultError(.usage, "--pbkdf2-iterations must be a whole number from \(r.lowerBound) to \(r.upperBound)")
                }
                return .pbkdf2SHA512(iterations: i, salt: SecureRandom.bytes(16))
            }
            let t = a.values["kdf-time"].flatMap(Double.init) ?? 0.5
            return KDF.calibratePBKDF2(targetSeconds: t, minIterations: max(210_000, policy.kdfMinPBKDF2Iterations.value ?? 0))
        default:
            throw VaultError(.usage, "unknown KDF '\(alg)'", hint: "use argon2id (default) or pbkdf2")
        }
    }

    /// `--kdf-mem SIZE`, within the bounds a keyslot may hold (8 KiB to 4 GiB), if given.
    static func kdfMemory(_ a: Arguments) throws -> UInt64? {
        try a.values["kdf-mem"].map { v -> UInt64 in
            guard let m = ByteCount.parse(v), KDFParameters.argon2idMemoryRange.contains(m) else {
                throw VaultError(.usage, "--kdf-mem must be a size from 8K to 4G")
            }
            return m
        }
    }

    static func runInit(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        if Vault.exists(ctx.layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(ctx.layout.root)", hint: "use it, or set VAULT_HOME to another folder")
        }
        let params = try kdfParameters(a, policy: ctx.policy)
        let orgKey = try a.values["org-key"].map { try OrgKeyFile.read($0, count: 32, what: "X25519 public key").withUnsafeBytes { Array($0) } }
        if ctx.policy.escrowRequired.value == true && orgKey == nil {
            throw VaultError(.policy, "the policy requires the master key to be escrowed", hint: "vault init --org-key FILE (your organisation's escrow public key)")
        }
        let src = ctx.password
        let pw = try src.read("New vault password: ")
        if !src.isExplicit {
            let again = try src.read("Repeat the password: ")
            guard pw.constantTimeEquals(again) else { throw VaultError(.usage, "the passwords do not match; nothing was created") }
        }
        guard pw.count >= 8 else { throw VaultError(.usage, "the password is too short: use at least 8 characters") }
        let vault = try Vault.create(layout: ctx.layout, password: pw, kdf: params)
        if let orgKey { try vault.addEscrowSlot(orgPublicKey: orgKey) }
        // Keep re-downloadable content out of backups by default; everything when the policy says so.
        let exclusion = ctx.policy.backupExclusion.value ?? "cache"
        if exclusion != "none" && !(a.flag("no-backup-exclusion") && ctx.policy.backupExclusion.value == nil) {
            let report = try vault.applyBackupExclusion(all: exclusion == "all")
            for n in report.notes { ctx.out.note(n) }
        }
        if ctx.out.json {
            try ctx.out.emit(["ok": "true", "vaultId": vault.vaultId, "path": ctx.layout.root, "kdf": params.algorithmName])
        } else {
            ctx.out.line("Created a vault at \(ctx.layout.root) (KDF \(describe(params))).")
            ctx.out.line("Next: `vault unlock`, then `vault put FILE`.")
        }
    }

    static func describe(_ p: KDFParameters) -> String {
        switch p {
        case .argon2id(let ops, let mem, _): return "argon2id, \(ops) passes, \(ByteCount.format(mem))"
        case .pbkdf2SHA512(let it, _): return "pbkdf2-sha512, \(it) iterations"
        }
    }

    static func runUnlock(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        func dur(_ k: String, _ d: Int64) throws -> Int64 {
            guard let v = a.values[k] else { return d }
            guard let s = Duration.parse(v) else { throw VaultError(.usage, "--\(k) takes a duration like 15m, 8h or 0 (never)") }
            return s
        }
        let idle = try dur("idle", VaultSessions.defaultIdleTimeout)
        let absolute = try dur("absolute", VaultSessions.defaultAbsoluteTimeout)
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
        if a.flag("recovery-key") || a.values["recovery-key-file"] != nil {
            let typed = try a.values["recovery-key-file"].map { try PasswordInput.fromFile($0) }
                ?? PasswordInput.fromTerminal("Recovery key: ")
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
            struct UnlockJSON: Encodable { var ok = true; var keyring: String; var message: String; var idleTimeout: Int64?; var absoluteTimeout: Int64? }
            try ctx.out.emit(UnlockJSON(keyring: held ? "held" : "unavailable", message: msg,
                                        idleTimeout: held ? limits.idle : nil, absoluteTimeout: held ? limits.absolute : nil))
        } else { ctx.out.line(msg) }
    }

    static func runLock(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        if a.flag("all") {
            let viaAgents = AgentClient.lockAll(environment: ctx.environment)
            let cleared = ctx.sessions.keyringAvailability.available ? try KeyringSession.clearAll() : false
            let msg = viaAgents > 0 || cleared ? "Locked every vault of this user (\(viaAgents) through its agent)." : "Every vault was already locked."
            if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
            return
        }
        let removed = try ctx.sessions.lock()
        let msg = removed ? "Locked: the key was removed from the keyring." : "Already locked."
        if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
    }

    struct StatusJSON: Encodable {
        var path: String
        var vaultId: String
        var locked: Bool
        var keyring: String
        var unlockedAt: Int64?
        var locksAt: Int64?
        var nodes: Int?
        /// Outbox entries waiting for the next sync (pending only).
        var pendingChanges: Int?
        /// Outbox entries by state: pending, conflict, failed, held (paused or cancelled).
        var changes: OutboxCounts?
        /// Entries in conflict or failed, with their reasons.
        var problems: [OutboxProblem]?
        var storage: StorageReport?
        var lastSync: String?
        var syncHealth: SyncHealth?
        /// Conflicts syncs settled, listed by `vault conflicts`.
        var conflicts: Int?
        var warnings: [String] = []
        var reducedProtection: [String]
        /// `agent` when a running `vault agent` locks at the deadline; `next-command` when only
        /// the next command enforces auto-lock.
        var autoLock: String = "next-command"
        var agent: AgentStatus?
    }

    static func runStatus(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 0)
        let (file, _) = try Vault.readKeyslots(ctx.layout)
        let sessions = ctx.sessions
        let avail = sessions.keyringAvailability
        var s = StatusJSON(path: ctx.layout.root, vaultId: file.body.vaultId, locked: true,
                           keyring: avail.available ? "available" : "unavailable: \(avail.reason)",
                           reducedProtection: sessions.degradations)
        let (rec, expired) = try sessions.currentSession()
        s.agent = try ctx.agent()?.status()   // after the session request this command's use moved
        s.autoLock = s.agent == nil ? "next-command" : "agent"
        if let rec {
            s.locked = false
            s.unlockedAt = rec.unlockedAt
            let idleEnd = rec.idleTimeout > 0 ? rec.lastUsedAt + rec.idleTimeout : Int64.max
            let absEnd = rec.absoluteTimeout > 0 ? rec.unlockedAt + rec.absoluteTimeout : Int64.max
            s.locksAt = min(idleEnd, absEnd) == Int64.max ? nil : min(idleEnd, absEnd)
            if let agent = s.agent { s.locksAt = agent.session?.locksAt.map { Int64($0.rounded(.up)) } }   // to the second
        }
        if rec != nil || ctx.password.isExplicit || !avail.available {
            let vault = try ctx.openVault(lock: .control, access: .read)   // also beside a sync (the agent's)
            s.nodes = try vault.nodeCount()
            let changes = try vault.outboxCounts()
            s.changes = changes
            s.pendingChanges = changes.pending
            s.problems = try vault.outboxProblems(limit: 10)
            s.storage = try vault.storageReport()
            s.conflicts = try vault.conflictCount()
            let state = try vault.syncState([.serverURL, .serverUser])
            if let url = state[.serverURL] {
                let health = try vault.syncHealth()
                s.syncHealth = health
                let when = health.lastSuccessAt.map { "last successful sync \(Date(timeIntervalSince1970: TimeInterval($0)))" } ?? "never synced"
                let failed = health.failuresInRow > 0
                    ? "; \(health.failuresInRow) failed since" + (health.lastFailure.map { " (last: \($0))" } ?? "") : ""
                s.lastSync = "\(url) as \(state[.serverUser] ?? "?"); \(when)\(failed)"
                if let w = health.warning(now: Int64(Date().timeIntervalSince1970), unsynced: changes.total) { s.warnings.append(w) }
            } else {
                s.lastSync = "no server (vault login --server URL --user NAME)"
            }
        }
        if ctx.out.json { try ctx.out.emit(s); return }
        ctx.out.line("vault   \(s.path)")
        ctx.out.line("id      \(s.vaultId)")
        if let expired { ctx.out.line("state   locked — \(expired)") }
        else if s.locked { ctx.out.line("state   locked (run `vault unlock`)") }
        else {
            let when = s.locksAt.map { Date(timeIntervalSince1970: TimeInterval($0)).description } ?? "never"
            ctx.out.line("state   unlocked (auto-locks at \(when))")
        }
        ctx.out.line("keyring \(s.keyring)")
        if s.agent == nil {
            ctx.out.line("autolock at the next vault command only: no `vault agent` runs (`vault agent install` locks at the deadline)")
        }
        for d in s.reducedProtection { ctx.out.line("reduced protection: \(d)") }
        if let n = s.nodes { ctx.out.line("nodes   \(n)") }
        if let c = s.changes {
            var line = "pending \(c.pending) local change(s) awaiting sync"
            if c.conflict > 0 { line += "; \(c.conflict) in conflict" }
            if c.failed > 0 { line += "; \(c.failed) failed (retried at the next sync)" }
            if c.held > 0 { line += "; \(c.held) paused or cancelled (`vault transfers resume`)" }
            ctx.out.line(line)
            for p in s.problems ?? [] {
                ctx.out.line("  \(p.state.rawValue): \(p.op.rawValue.replacingOccurrences(of: "_", with: " ")) \(p.path)" + (p.reason.map { ": \($0)" } ?? ""))
            }
        }
        if let st = s.storage {
            ctx.out.line("storage pinned \(ByteCount.format(st.pinnedBytes)), cached \(ByteCount.format(st.cachedBytes)), staged \(ByteCount.format(st.stagedBytes)), free \(ByteCount.format(st.freeBytes))")
        }
        if let l = s.lastSync { ctx.out.line("sync    \(l)") }
        if let agent = s.agent { agentLines(agent).forEach(ctx.out.line) }
        if let c = s.conflicts, c > 0 { ctx.out.line("conflicts \(c) settled by syncs (`vault conflicts` lists them)") }
        for w in s.warnings { ctx.out.warn(w) }
    }
}
