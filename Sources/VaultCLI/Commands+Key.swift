import Foundation
import VaultCore
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

extension VaultCommandLine {
    static let keyCommands: [Command] = [
        Command(name: "key", usage: """
            vault key list [--json]
            vault key add-recovery                    # prints a recovery key once
            vault key add-escrow --org-key FILE       # escrow to an organisation's X25519 public key
            vault key remove SLOT
            vault key passwd [--new-password-file F] [--kdf-time S]
            vault key rotate                          # new master key; crash-safe
            vault key reencrypt                       # new data keys for all content; resumable
            vault key calibrate [--kdf argon2id|pbkdf2] [--kdf-time S] [--apply]
            """, summary: "manage keyslots and keys: list, add-recovery, add-escrow, remove, passwd, rotate, reencrypt, calibrate",
                valued: ["org-key", "new-password-file", "kdf", "kdf-time", "kdf-ops", "kdf-mem", "pbkdf2-iterations"],
                flags: ["apply"], run: runKey),
        Command(name: "admin", usage: """
            vault admin keygen --out DIR              # organisation escrow (X25519) and signing (Ed25519) key pairs
            vault admin recover --org-key FILE [--new-password-file F]   # recover a vault with the escrow private key
            vault admin sign-policy POLICY --signing-key FILE            # writes POLICY.sig
            """, summary: "organisation tools: key pairs, escrow recovery, policy signing",
                valued: ["out", "org-key", "new-password-file", "signing-key", "kdf", "kdf-time", "kdf-ops", "kdf-mem", "pbkdf2-iterations"],
                obeysPolicy: false, run: runAdmin),
    ]

    struct SlotJSON: Encodable {
        var id: String; var type: String; var kdf: String?; var createdAt: Int64; var orgPublicKey: String?
    }

    static func runKey(_ ctx: CommandContext, _ a: Arguments) throws {
        let sub = try a.positional(0, "a key subcommand (list, add-recovery, add-escrow, remove, passwd, rotate, calibrate)")
        switch sub {
        case "list":
            let vault = try ctx.openVault()
            let slots = vault.keyslots.body.slots.map {
                SlotJSON(id: $0.id, type: $0.type, kdf: $0.kdf.map { k in k.alg + (k.iterations.map { " \($0) iterations" } ?? " ops \(k.opsLimit ?? 0), \(ByteCount.format(k.memLimitBytes ?? 0))") },
                         createdAt: $0.createdAt, orgPublicKey: $0.orgPublicKey)
            }
            if ctx.out.json { try ctx.out.emit(slots); return }
            ctx.out.line("master key epoch \(vault.keyslots.body.epoch)")
            for s in slots { ctx.out.line("\(s.id.padding(toLength: 12, withPad: " ", startingAt: 0)) \(s.type.padding(toLength: 9, withPad: " ", startingAt: 0)) \(s.kdf ?? s.orgPublicKey.map { "org key \($0.prefix(16))…" } ?? "")") }
        case "add-recovery":
            let vault = try ctx.openVault()
            let key = try vault.addRecoverySlot()
            let text = RecoveryKey.format(key)
            try publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(["recoveryKey": text]); return }
            for l in ["Recovery key (shown once; write it down and keep it apart from this device):", "", "    \(text)", ""] { ctx.out.line(l) }
            ctx.out.line("Unlock with it: vault unlock --recovery-key")
        case "add-escrow":
            guard let f = a.values["org-key"] else { throw VaultError(.usage, "add-escrow needs --org-key FILE (the organisation's X25519 public key)") }
            let pk = try OrgKeyFile.read(f, count: 32, what: "X25519 public key").withUnsafeBytes { Array($0) }
            let vault = try ctx.openVault()
            let id = try vault.addEscrowSlot(orgPublicKey: pk)
            try publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(["slot": id]) } else { ctx.out.line("Escrowed the master key to the organisation key (slot \(id)).") }
        case "remove":
            let id = try a.positional(1, "SLOT")
            let vault = try ctx.openVault()
            if ctx.policy.escrowRequired.value == true,
               vault.keyslots.body.slots.filter({ $0.type == "escrow" }).map(\.id) == [id] {
                throw VaultError(.policy, "the policy requires an escrow slot; '\(id)' is the only one")
            }
            try vault.removeSlot(id)
            try publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(OKResult(message: "removed \(id)")) } else { ctx.out.line("Removed keyslot \(id).") }
        case "passwd":
            // Both passwords are read before the vault is locked; the slot keeps its KDF and costs
            // unless --kdf… asks otherwise (raised to the policy's floor when below it).
            let current = try ctx.password.read("Current password: ")
            let new = try newPassword(ctx, a)
            let asked = kdfAsked(a) ? try kdfParameters(a, policy: ctx.policy) : nil
            let vault = try ctx.openVault()
            let params = try vault.changePassword(current: current, new: new) { slot in
                if let asked { return asked }
                let kept = slot.withFreshSalt
                do { try ctx.policy.checkKDF(kept) } catch {
                    return try kdfParameters(a, policy: ctx.policy, algorithm: kept.algorithmName)
                }
                return kept
            }
            try publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(OKResult(message: "password changed")) } else { ctx.out.line("Password changed (KDF \(describe(params))). The master key is unchanged.") }
        case "rotate":
            let vault = try ctx.openVault()
            let pw = try ctx.password.read("Password: ")
            let r = try vault.rotate(password: pw)
            try ctx.sessions.refresh(after: vault)
            try publishEnvelope(ctx, vault)
            if ctx.out.json {
                try ctx.out.emit(["epoch": "\(r.epoch)", "rewrappedBlobs": "\(r.rewrappedBlobs)",
                                  "recoveryKeys": r.recoveryKeys.map { "\($0.slot)=\(RecoveryKey.format($0.key))" }.joined(separator: ","),
                                  "droppedSlots": r.droppedSlots.joined(separator: ","), "damagedBlobs": r.damagedBlobs.joined(separator: ",")])
                return
            }
            ctx.out.line("Rotated the master key (epoch \(r.epoch)): database rekeyed, \(r.rewrappedBlobs) data key(s) rewrapped.")
            for (slot, key) in r.recoveryKeys {
                for l in ["New recovery key for \(slot) (the old one no longer works; shown once):", "", "    \(RecoveryKey.format(key))", ""] { ctx.out.line(l) }
            }
            if !r.droppedSlots.isEmpty { ctx.out.warn("dropped slot(s) this password does not open: \(r.droppedSlots.joined(separator: ", "))") }
            if !r.damagedBlobs.isEmpty { ctx.out.warn("\(r.damagedBlobs.count) damaged blob(s) could not be rewrapped; run `vault doctor --verify`") }
        case "reencrypt":
            try runReencrypt(ctx)
        case "calibrate":
            let params = try kdfParameters(a, policy: ctx.policy)
            let probe = SecureBytes(copying: Array("calibration probe".utf8))
            let t0 = Date()
            _ = try KDF.derive(password: probe, parameters: params, length: 32)
            let took = Date().timeIntervalSince(t0)
            if a.flag("apply") {
                let vault = try ctx.openVault()
                let pw = try ctx.password.read("Password: ")
                try vault.changePassword(current: pw, new: pw, kdf: params)
                try publishEnvelope(ctx, vault)
            }
            let msg = "\(describe(params)): one unlock takes \(String(format: "%.2f", took)) s here\(a.flag("apply") ? " (applied to the password slot)" : "")"
            if ctx.out.json { try ctx.out.emit(["kdf": describe(params), "seconds": String(format: "%.3f", took), "applied": a.flag("apply") ? "true" : "false"]) } else { ctx.out.line(msg) }
        default:
            throw VaultError(.usage, "unknown key subcommand '\(sub)'", hint: "see `vault key --help`")
        }
    }

    /// The new password: from --new-password-file, or asked twice on the terminal.
    static func newPassword(_ ctx: CommandContext, _ a: Arguments) throws -> SecureBytes {
        let src = a.values["new-password-file"].map { f in PasswordSource(isExplicit: true) { _ in try PasswordInput.fromFile(f) } }
            ?? PasswordSource(isExplicit: false) { try PasswordInput.fromTerminal($0) }
        let pw = try src.read("New password: ")
        if !src.isExplicit {
            guard pw.constantTimeEquals(try src.read("Repeat the new password: ")) else { throw VaultError(.usage, "the passwords do not match; nothing was changed") }
        }
        guard pw.count >= 8 else { throw VaultError(.usage, "the new password is too short: use at least 8 characters") }
        return pw
    }

    static func runAdmin(_ ctx: CommandContext, _ a: Arguments) throws {
        let sub = try a.positional(0, "an admin subcommand (keygen, recover, sign-policy)")
        switch sub {
        case "keygen":
            guard let out = a.values["out"] else { throw VaultError(.usage, "keygen needs --out DIR") }
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let names = ["org-escrow.pub", "org-escrow.key", "org-signing.pub", "org-signing.key"]
            let paths = names.map { (out as NSString).appendingPathComponent($0) }
            if let taken = paths.first(where: { FileManager.default.fileExists(atPath: $0) }) {
                throw VaultError(.alreadyExists, "\(taken) exists; refusing to overwrite a key", hint: "choose another --out folder; nothing was written")
            }
            let escrow = SealedBox.generateKeyPair()
            let signing = Ed25519.generateKeyPair()
            for (path, key) in zip(paths, [SecureBytes(copying: escrow.publicKey), escrow.secretKey,
                                           SecureBytes(copying: signing.publicKey), signing.secretKey]) {
                try OrgKeyFile.write(key, to: path)
            }
            ctx.out.line("Wrote org-escrow.pub/.key (X25519, for `vault key add-escrow`) and org-signing.pub/.key (Ed25519, for policies) to \(out). Keep the .key files offline.")
        case "recover":
            guard let f = a.values["org-key"] else { throw VaultError(.usage, "recover needs --org-key FILE (the escrow private key)") }
            let sk = try OrgKeyFile.read(f, count: 32, what: "X25519 private key")
            let (file, _) = try Vault.readKeyslots(ctx.layout)
            let master = try file.unlock(escrowSecretKey: sk)
            let vault = try Vault.open(layout: ctx.layout, masterKey: master)
            let pw = try newPassword(ctx, a)
            // `admin` runs under a broken policy (to repair it), but the new slot still meets the
            // KDF floors of a policy that loads.
            let policy = (try? PolicyLoader.load(layout: ctx.layout, environment: ctx.environment)) ?? .none
            try vault.setPassword(pw, kdf: try kdfParameters(a, policy: policy), replacingAll: true)
            try publishEnvelope(ctx, vault)
            ctx.out.line("Recovered the vault with the organisation key and set a new password.")
        case "sign-policy":
            let policy = try a.positional(1, "POLICY file")
            guard let keyFile = a.values["signing-key"] else { throw VaultError(.usage, "sign-policy needs --signing-key FILE") }
            let sk = try OrgKeyFile.read(keyFile, count: 64, what: "Ed25519 private key")
            let body = try SourceFile(policy, accepting: .regular, what: "the policy").readAll(limit: 1 << 20)
            let sig = try Ed25519.sign(body, secretKey: sk)
            let sigPath = policy + ".sig"
            try Data(sig).base64EncodedString().appending("\n").write(toFile: sigPath, atomically: true, encoding: .utf8)
            ctx.out.line("Signed \(policy) → \(sigPath)")
        default:
            throw VaultError(.usage, "unknown admin subcommand '\(sub)'")
        }
    }
}
