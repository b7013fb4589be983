import Foundation

extension VaultLayout {
    /// True when this layout holds a vault (its keyslot file is there).
    public var holdsVault: Bool { POSIX.exists(keyslotFile) }

    /// Refuses a vault whose files or folders others can write.
    package func checkPermissions() throws {
        for p in directories + [keyslotFile, databaseFile] { try POSIX.checkPrivate(p) }
    }
}

extension KeyslotFile {
    /// Reads the keyslot file of `layout` and its bytes (not yet authenticated: that needs the
    /// master key). A missing vault is `.notInitialized` (saying so when it was wiped by policy);
    /// files others can write are refused.
    public static func read(_ layout: VaultLayout) throws -> (KeyslotFile, [UInt8]) {
        guard layout.holdsVault else {
            if let note = FileManager.default.contents(atPath: UnlockFailures.wipedMarker(layout)) {
                throw VaultError(.notInitialized, "no vault at \(layout.root): " + String(decoding: note, as: UTF8.self).split(separator: "\n").joined(separator: " "))
            }
            throw VaultError(.notInitialized, "no vault at \(layout.root)", hint: "run `vault init` first (or set VAULT_HOME)")
        }
        try layout.checkPermissions()
        let bytes = try POSIX.readFile(layout.keyslotFile)
        return (try KeyslotFile.parse(bytes), bytes)
    }
}
