import Foundation
import VaultCore
import VaultCrypto

/// What every command has: the layout, the environment, output, and how to get the password.
struct CommandContext {
    let layout: VaultLayout
    let environment: [String: String]
    let out: Output
    let passwordFile: String?

    var sessions: VaultSessions {
        VaultSessions(layout: layout, environment: environment, warn: { out.warn($0) })
    }

    var password: PasswordSource { PasswordInput.source(file: passwordFile, environment: environment) }

    /// Opens the unlocked vault for this command (holding the vault lock until released).
    func openVault() throws -> Vault { try sessions.open(password: password) }
}
