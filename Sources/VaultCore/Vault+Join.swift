import Foundation
import VaultCrypto

/// A second device (`vault join`): a local vault with the vault id, master key and keyslots of
/// the account's envelope, and its own metadata database, cache and device id.
extension Vault {
    /// Creates the local vault at `layout` from `envelope` (checked by the caller with
    /// `EnvelopeCheck.precheck` and opened to `masterKey` with `unlockEnvelope`). The keyslot file
    /// is the envelope, byte for byte. Nothing is left behind when it fails: every folder and
    /// file it made is removed (a `VAULT_HOME` that existed, empty, stays as it was).
    @discardableResult
    public static func join(layout: VaultLayout, envelope: [UInt8], masterKey: SecureBytes) throws -> Vault {
        if exists(layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(layout.root)", hint: "use `vault join` in an empty VAULT_HOME")
        }
        let file = try KeyslotFile.parse(envelope)
        let keys = try KeyHierarchy(masterKey: masterKey, vaultId: file.vaultId, epoch: file.body.epoch)
        try KeyslotFile.verify(bytes: envelope, macKey: keys.keyslotMacKey)
        if POSIX.exists(layout.root), let names = try? FileManager.default.contentsOfDirectory(atPath: layout.root), !names.isEmpty {
            throw VaultError(.alreadyExists, "\(layout.root) is not empty", hint: "use `vault join` in an empty VAULT_HOME")
        }
        var made: [String] = []
        do {
            for d in layout.directories where !POSIX.exists(d) {
                try POSIX.ensurePrivateDirectory(d)
                made.append(d)
            }
            let lock = try VaultLock(path: layout.lockFile, timeout: lockTimeout)
            let db = try openDatabase(layout: layout, keys: keys)
            try NodesTable(db: db).insertRoot(now: Vault.now)
            try POSIX.writeAtomically(envelope, to: layout.keyslotFile)
            return Vault(layout: layout, keyslots: file, keys: keys, masterKey: masterKey, db: db, lock: lock)
        } catch {
            for f in [layout.keyslotFile, layout.databaseFile, layout.databaseFile + "-journal", layout.lockFile] { unlink(f) }
            for d in made.reversed() { rmdir(d) }
            throw error
        }
    }

    /// Removes a vault `join` just made, when a later step of joining failed (it holds nothing
    /// yet): its keyslot file, database, lock and empty folders.
    public func removeJoined() {
        db.close()
        for f in [layout.keyslotFile, layout.databaseFile, layout.databaseFile + "-journal", layout.lockFile] { unlink(f) }
        for d in layout.directories.reversed() { rmdir(d) }
    }
}
