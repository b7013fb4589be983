import VaultSQL

extension VaultError {
    /// Any error as a VaultError: database damage becomes `.integrity`, a full disk `.noSpace`.
    public static func wrap(_ error: Error) -> VaultError {
        if let v = error as? VaultError { return v }
        if let p = error as? SourceProblem { return p.error }
        if let s = error as? SQLError {
            switch s.kind {
            case .corrupt, .notADatabase:
                return VaultError(.integrity, "the metadata database is damaged or was tampered with (\(s.message))",
                                  hint: "restore metadata.db from a backup; content blobs are intact")
            case .full:
                return VaultError(.noSpace, "the disk is full while updating the metadata database", hint: "free some space and try again")
            case .readOnly:
                return VaultError(.io, "the metadata database cannot be written: the vault is on a read-only filesystem",
                                  hint: "remount it read-write to change the vault; reading commands work read-only")
            case .busy:
                return VaultError(.busy, "the metadata database is busy", hint: "try again")
            default:
                return VaultError(.io, "\(s)")
            }
        }
        return VaultError(.internalError, "unexpected error: \(error)")
    }
}
