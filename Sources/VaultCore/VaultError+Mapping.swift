import VaultSQL

/// Database damage becomes `.integrity`, a full disk `.noSpace` (through `VaultError.wrap`).
extension SQLError: VaultErrorConvertible {
    public var vaultError: VaultError {
        switch kind {
        case .corrupt, .notADatabase:
            return VaultError(.integrity, "the metadata database is damaged or was tampered with (\(message))",
                              hint: "restore metadata.db from a backup; content blobs are intact")
        case .full:
            return VaultError(.noSpace, "the disk is full while updating the metadata database", hint: "free some space and try again")
        case .readOnly:
            return VaultError(.io, "the metadata database cannot be written: the vault is on a read-only filesystem",
                              hint: "remount it read-write to change the vault; reading commands work read-only")
        case .busy:
            return VaultError(.busy, "the metadata database is busy", hint: "try again")
        default:
            return VaultError(.io, "\(self)")
        }
    }
}
