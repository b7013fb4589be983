import Foundation
import VaultCrypto
import VaultPrimitives

extension VaultLayout {
    /// The id of this local copy of the vault `vaultId`: the first 16 hex digits of
    /// `SHA-256("vault-local-copy-v1|" + vaultId + "|" + the canonical path of the vault folder)`.
    ///
    /// Everything that names "this vault on this machine" is keyed by it, not by the vault id that
    /// every copy of one vault shares (a `vault join` or `vault backup import` into a second
    /// folder): the keyring session item, the agent's socket and pid file, its systemd unit. It
    /// needs no key and no file (a locked vault, a read-only filesystem), two folders never share
    /// it, a symbolic link to the folder names the same copy, and a vault moved to another folder is
    /// another copy (unlock it again there). It is no secret: a hash of what the keyslot file and
    /// the folder's name already say.
    public func localId(vaultId: String) -> String {
        var h = SHA256Hasher()
        h.update(Array("vault-local-copy-v1|\(vaultId)|\(canonicalRoot)".utf8))
        return String(Hex.encode(h.finalize()).prefix(16))
    }

    /// The vault folder with symbolic links, `.` and `..` resolved (as given when it cannot be).
    var canonicalRoot: String {
        guard let p = realpath(root, nil) else { return (root as NSString).standardizingPath }
        defer { free(p) }
        return String(cString: p)
    }
}
