import Foundation
import VaultArguments
import VaultCore
import VaultCrypto

extension KeyCommand {
    /// `vault key add-fido2`.
    struct AddFIDO2: VaultCommand, ProducesJSON, ReadsPassword {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "add-fido2", abstract: "add a keyslot opened by a FIDO2 security key (hmac-secret; `vault unlock` asks for a touch)",
                                 discussion: "Touch the key twice: once to make a credential, once to derive the slot key. When the key has a PIN it is asked (or read from --pin-file) and then needed at every unlock. Enroll two keys to have a spare. The slot stays on this device (it is not in the key envelope other devices get) and does not count as a way back in: keep a password or recovery slot. VAULT_FIDO2_DEVICE or --device names the key (default: the first one found).")
        }

        @Option(help: "read the security key's PIN from the first line of FILE", valueName: "file", completion: .file)
        var pinFile: String?
        @Option(help: "the security key's hidraw device (default: the first FIDO2 key found)", valueName: "path", completion: .file)
        var device: String?
        @OptionGroup var password: PasswordOptions
        @OptionGroup var output: OutputOptions

        struct Result: Encodable {
            var slot: String
            var pin: Bool
        }

        func run(_ ctx: CommandContext) throws {
            let vault = try ctx.openVault()
            let pin = pinFile.map { f in PasswordSource(isExplicit: true) { _ in try PasswordInput.fromFile(f, option: "--pin-file") } }
                ?? PasswordSource(isExplicit: false) { try PasswordInput.fromTerminal($0) }
            let added = try vault.addFIDO2Slot(source: FIDO2Source(device: device, environment: ctx.environment), pin: pin,
                                               requirePIN: ctx.policy.hardwareKeyPin.value == true, touch: { ctx.out.note($0) })
            if ctx.out.json { try ctx.out.emit(Result(slot: added.id, pin: added.pin)); return }
            ctx.out.line("Added keyslot \(added.id), opened by this FIDO2 security key (\(added.pin ? "PIN and touch" : "touch")): `vault unlock` asks for it.")
        }
    }
}
