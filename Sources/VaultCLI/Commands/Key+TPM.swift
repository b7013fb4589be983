import Foundation
import VaultArguments
import VaultCore
import VaultCrypto
import VaultTPM

extension KeyCommand {
    /// `vault key add-tpm`.
    struct AddTPM: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "add-tpm", abstract: "add a keyslot sealed in this machine's TPM 2.0 (`vault unlock` tries it first)",
                                 discussion: "The slot never leaves this machine (it is not in the key envelope other devices get) and does not count as a way back in: keep a password or recovery slot. VAULT_TPM_TCTI names the TPM (default: the device /dev/tpmrm0). PCR binding is off by default: a firmware or boot change breaks it, and the password is then the way in.")
        }

        @Flag(help: "protect the slot with a PIN (asked twice on the terminal); the TPM locks out after too many wrong ones")
        var pin = false
        @Option(help: "read the PIN from the first line of FILE (implies --pin)", valueName: "file", completion: .file)
        var pinFile: String?
        @Option(help: "bind the slot to the current values of these SHA-256 PCRs (e.g. 7 or 7,16; default none)", valueName: "list")
        var pcrs: PCRSelection?
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var slot: String
            var pin: Bool
            var pcrs: [Int]
        }

        func run(_ ctx: CommandContext) throws {
            let typed = try pinFile.map { try PasswordInput.fromFile($0, option: "--pin-file") } ?? (pin ? try Self.askPIN() : nil)
            if typed == nil && ctx.policy.hardwareKeyPin.value == true {
                throw VaultError(.policy, "the policy requires a PIN on TPM slots (hardwareKeyPin); nothing was changed", hint: "vault key add-tpm --pin")
            }
            if let typed, typed.count < 4 { throw VaultError(.usage, "the TPM PIN is too short: use at least 4 characters; nothing was changed") }
            let vault = try ctx.openVault()
            let selection = pcrs ?? .none
            let id = try vault.addTPMSlot(tcti: Vault.tpmConfiguration(ctx.environment), pin: typed, pcrs: selection)
            if ctx.out.json { try ctx.out.emit(Result(slot: id, pin: typed != nil, pcrs: selection.indexes)); return }
            ctx.out.line("Added keyslot \(id), sealed in this machine's TPM (\(typed != nil ? "PIN" : "no PIN")\(selection.isEmpty ? "" : ", PCRs \(selection)")): `vault unlock` tries it first.")
        }

        /// The new PIN, asked twice on the terminal.
        static func askPIN() throws -> SecureBytes {
            let first = try PasswordInput.fromTerminal("New TPM PIN: ")
            guard first.constantTimeEquals(try PasswordInput.fromTerminal("Repeat the TPM PIN: ")) else {
                throw VaultError(.usage, "the PINs do not match; nothing was changed")
            }
            return first
        }
    }
}
