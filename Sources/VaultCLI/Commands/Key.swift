import Foundation
import VaultArguments
import VaultCore
import VaultCrypto

/// `vault key`: keyslots and keys.
struct KeyCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "key", abstract: "manage keyslots and keys: list, add-recovery, add-escrow, add-tpm, add-fido2, remove, passwd, rotate, reencrypt, calibrate",
                             subcommands: [List.self, AddRecovery.self, AddEscrow.self, AddTPM.self, AddFIDO2.self, Remove.self, Passwd.self,
                                           Rotate.self, Reencrypt.self, Calibrate.self])
    }

    /// `vault key list`.
    struct List: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "list", abstract: "list the keyslots (password, recovery, escrow, tpm2, fido2) and the master key epoch")
        }

        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        /// One keyslot (the JSON result is an array of these).
        struct Slot: Encodable {
            var id: String
            var type: String
            var kdf: String?
            var createdAt: Int64
            var orgPublicKey: String?
            /// tpm2 slots: whether a PIN protects it, the PCRs it is bound to, and whose TPM sealed
            /// it ("this machine", "another machine", or why the TPM could not be asked). fido2
            /// slots: whether the key's PIN is used, and the relying party of the credential.
            var pin: Bool?
            var pcrs: [Int]?
            var machine: String?
            var relyingParty: String?
        }

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            // One primary derivation for all tpm2 slots, none without them.
            let tpm = vault.keyslots.machineBoundSlots.isEmpty ? nil : MachineTPM(tcti: Vault.tpmConfiguration(ctx.environment))
            let slots = vault.keyslots.body.slots.map {
                Slot(id: $0.id, type: $0.type, kdf: $0.kdf.map { k in k.alg + (k.iterations.map { " \($0) iterations" } ?? " ops \(k.opsLimit ?? 0), \(ByteCount.format(k.memLimitBytes ?? 0))") },
                     createdAt: $0.createdAt, orgPublicKey: $0.orgPublicKey, pin: $0.tpm2?.pin ?? $0.fido2?.pin, pcrs: $0.tpm2?.pcrs,
                     machine: $0.tpm2 == nil ? nil : tpm?.owner(of: $0), relyingParty: $0.fido2?.rp)
            }
            if ctx.out.json { try ctx.out.emit(slots); return }
            ctx.out.line("master key epoch \(vault.keyslots.body.epoch)")
            for s in slots {
                let tpm = s.relyingParty.map { rp in "security key, \(s.pin == true ? "PIN" : "no PIN"), touch, rp \(rp)" }
                    ?? s.pin.map { pin in [pin ? "PIN" : "no PIN", s.pcrs?.isEmpty == false ? "PCRs \(s.pcrs!.map(String.init).joined(separator: ","))" : "no PCRs", s.machine ?? ""].joined(separator: ", ") }
                ctx.out.line("\(s.id.padding(toLength: 12, withPad: " ", startingAt: 0)) \(s.type.padding(toLength: 9, withPad: " ", startingAt: 0)) \(s.kdf ?? s.orgPublicKey.map { "org key \($0.prefix(16))…" } ?? tpm ?? "")")
            }
        }
    }

    /// `vault key add-recovery`.
    struct AddRecovery: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "add-recovery", abstract: "add a recovery slot and print its recovery key once",
                                 discussion: "Write the key down and keep it apart from this device; `vault unlock --recovery-key` opens the vault with it.")
        }

        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable { var recoveryKey: String }

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            let text = RecoveryKey.format(try vault.addRecoverySlot())
            try KeyCommand.publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(Result(recoveryKey: text)); return }
            for l in ["Recovery key (shown once; write it down and keep it apart from this device):", "", "    \(text)", ""] { ctx.out.line(l) }
            ctx.out.line("Unlock with it: vault unlock --recovery-key")
        }
    }

    /// `vault key add-escrow`.
    struct AddEscrow: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "add-escrow", abstract: "escrow the master key to an organisation's X25519 public key")
        }

        @Option(help: "the organisation's X25519 public key (hex), as `vault admin keygen` writes it", valueName: "file", completion: .file)
        var orgKey: String
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable { var slot: String }

        func run(_ ctx: CommandContext) throws {
            let pk = try OrgKeyFile.read(orgKey, count: 32, what: "X25519 public key").withUnsafeBytes { Array($0) }
            let vault = try ctx.openVault()
            let id = try vault.addEscrowSlot(orgPublicKey: pk)
            try KeyCommand.publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(Result(slot: id)) } else { ctx.out.line("Escrowed the master key to the organisation key (slot \(id)).") }
        }
    }

    /// `vault key remove SLOT`.
    struct Remove: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "remove", abstract: "remove a keyslot (see `vault key list`)")
        }

        @Argument(help: "the slot id", valueName: "slot")
        var slot: String
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var ok = true
            var message: String
            var slot: String
        }

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            if ctx.policy.escrowRequired.value == true,
               vault.keyslots.body.slots.filter({ $0.type == "escrow" }).map(\.id) == [slot] {
                throw VaultError(.policy, "the policy requires an escrow slot; '\(slot)' is the only one")
            }
            try vault.removeSlot(slot)
            try KeyCommand.publishEnvelope(ctx, vault)
            if ctx.out.json { try ctx.out.emit(Result(message: "removed \(slot)", slot: slot)) } else { ctx.out.line("Removed keyslot \(slot).") }
        }
    }
}
