import Foundation
import VaultArguments
import VaultCore
import VaultCrypto

extension KeyCommand {
    /// `vault key passwd`.
    struct Passwd: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "passwd", abstract: "change the password (the master key is unchanged)",
                                 discussion: "The slot keeps its KDF and costs unless a --kdf option asks otherwise (they are raised to the policy's floor when below it). Both passwords are read before the vault is locked.")
        }

        @OptionGroup var newPassword: NewPasswordOptions
        @OptionGroup var kdf: KDFOptions
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var ok = true
            var message: String
            /// The new slot's KDF (`argon2id, 3 passes, 64.0 MiB`).
            var kdf: String
        }

        func run(_ ctx: CommandContext) throws {
            let current = try ctx.password.read("Current password: ")
            let new = try newPassword.read()
            let asked = kdf.asked ? try kdf.parameters(policy: ctx.policy) : nil
            let vault = try ctx.openVault()
            let params = try vault.changePassword(current: current, new: new) { slot in
                if let asked { return asked }
                let kept = slot.withFreshSalt
                do { try ctx.policy.checkKDF(kept) } catch {
                    return try kdf.parameters(policy: ctx.policy, algorithm: kept.algorithmName)
                }
                return kept
            }
            try KeyCommand.publishEnvelope(ctx, vault)
            let described = KDFOptions.describe(params)
            if ctx.out.json { try ctx.out.emit(Result(message: "password changed", kdf: described)) } else {
                ctx.out.line("Password changed (KDF \(described)). The master key is unchanged.")
            }
        }
    }

    /// `vault key calibrate`.
    struct Calibrate: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "calibrate", abstract: "measure what the KDF costs here (--apply: use them for the password slot)")
        }

        @OptionGroup var kdf: KDFOptions
        @Flag(help: "set the password slot to these costs (asks for the password)")
        var apply = false
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var kdf: String
            /// How long one unlock took here, in seconds.
            var seconds: Double
            var applied: Bool
        }

        func run(_ ctx: CommandContext) throws {
            let params = try kdf.parameters(policy: ctx.policy)
            let probe = SecureBytes(copying: Array("calibration probe".utf8))
            let t0 = Date()
            _ = try KDF.derive(password: probe, parameters: params, length: 32)
            let took = Date().timeIntervalSince(t0)
            if apply {
                let vault = try ctx.openVault()
                let pw = try ctx.password.read("Password: ")
                try vault.changePassword(current: pw, new: pw, kdf: params)
                try KeyCommand.publishEnvelope(ctx, vault)
            }
            let described = KDFOptions.describe(params)
            if ctx.out.json { try ctx.out.emit(Result(kdf: described, seconds: (took * 1000).rounded() / 1000, applied: apply)); return }
            ctx.out.line("\(described): one unlock takes \(String(format: "%.2f", took)) s here\(apply ? " (applied to the password slot)" : "")")
        }
    }
}
