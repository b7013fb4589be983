import Foundation
import VaultCore
import VaultCrypto

/// Derives keys from a password the way SECURITY.md documents, for tests that inspect files.
enum DocumentedKeys {
    static func databaseKeyHex(vaultHome: String, password: String) throws -> String {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: vaultHome + "/keyslots")))
        let file = try KeyslotFile.parse(bytes)
        let master = try file.unlock(password: SecureBytes(copying: Array(password.utf8)))
        let keys = try KeyHierarchy(masterKey: master, vaultId: file.vaultId, epoch: file.body.epoch)
        return keys.databaseKey.hexForStorage
    }
}
