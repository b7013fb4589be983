import Foundation
import VaultArguments
import VaultCore
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

extension KeyCommand {
    /// `vault key rotate`.
    struct Rotate: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "rotate", abstract: "new master key: the database is rekeyed and every data key rewrapped (crash-safe)",
                                 discussion: "Recovery slots get new recovery keys (printed once); slots the password does not open are dropped. This machine's TPM slot is sealed again for the new key (its PIN is asked, or read from --pin-file); when that cannot be done it is dropped, with the reason (re-enroll with `vault key add-tpm`), and so are other machines' TPM slots. Each FIDO2 slot the plugged-in security key holds is wrapped again under a fresh salt (one touch each; its PIN when it was enrolled with one); the others are dropped, with the reason (re-enroll with `vault key add-fido2`).")
        }

        @Option(help: "read this machine's TPM slot PIN from the first line of FILE, to seal the slot again for the new key",
                valueName: "file", completion: .file)
        var pinFile: String?
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            struct NewRecoveryKey: Encodable { var slot: String; var recoveryKey: String }
            var ok = true
            var epoch: Int
            var rewrappedBlobs: Int
            /// The new key of each recovery slot (the old ones no longer work).
            var recoveryKeys: [NewRecoveryKey]
            var droppedSlots: [String]
            var damagedBlobs: [String]
            /// tpm2 slots sealed again for the new key.
            var resealedSlots: [String]
        }

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            let pw = try ctx.password.read("Password: ")
            let tpmSlots = Set(vault.keyslots.deviceLocalSlots.map(\.id))
            let pin = pinFile.map { f in PasswordSource(isExplicit: true) { _ in try PasswordInput.fromFile(f, option: "--pin-file") } }
                ?? PasswordSource(isExplicit: false) { try PasswordInput.fromTerminal($0) }
            let fido2 = vault.keyslots.fido2Slots.isEmpty ? nil
                : FIDO2Rewrap(source: FIDO2Source(environment: ctx.environment), pin: pin, touch: { ctx.out.note($0) })
            let r = try vault.rotate(password: pw, tpm: TPMReseal(tcti: Vault.tpmConfiguration(ctx.environment), pin: pin), fido2: fido2)
            try ctx.sessions.refresh(after: vault)
            try KeyCommand.publishEnvelope(ctx, vault)
            if ctx.out.json {
                try ctx.out.emit(Result(epoch: Int(r.epoch), rewrappedBlobs: r.rewrappedBlobs,
                                        recoveryKeys: r.recoveryKeys.map { .init(slot: $0.slot, recoveryKey: RecoveryKey.format($0.key)) },
                                        droppedSlots: r.droppedSlots, damagedBlobs: r.damagedBlobs, resealedSlots: r.resealedSlots))
                return
            }
            ctx.out.line("Rotated the master key (epoch \(r.epoch)): database rekeyed, \(r.rewrappedBlobs) data key(s) rewrapped.")
            for (slot, key) in r.recoveryKeys {
                for l in ["New recovery key for \(slot) (the old one no longer works; shown once):", "", "    \(RecoveryKey.format(key))", ""] { ctx.out.line(l) }
            }
            let droppedTPM = r.droppedSlots.filter(tpmSlots.contains), dropped = r.droppedSlots.filter { !tpmSlots.contains($0) }
            if !dropped.isEmpty { ctx.out.warn("dropped slot(s) this password does not open: \(dropped.joined(separator: ", "))") }
            for id in r.resealedSlots {
                ctx.out.line(id.hasPrefix(KeyslotFile.fido2Type) ? "Wrapped FIDO2 slot \(id) again for the new key (fresh salt)." : "Sealed TPM slot \(id) again for the new key.")
            }
            if !droppedTPM.isEmpty {
                ctx.out.warn("dropped hardware slot(s) \(droppedTPM.joined(separator: ", ")) (\(r.tpmNote ?? "another machine's")): re-enroll with `vault key add-tpm` or `vault key add-fido2`")
            }
            if !r.damagedBlobs.isEmpty { ctx.out.warn("\(r.damagedBlobs.count) damaged blob(s) could not be rewrapped; run `vault doctor --verify`") }
        }
    }
}
