import Foundation
import VaultCrypto

/// The keys of every master-key epoch a vault can reach: the current one, and each older one
/// through the key history (SECURITY.md "Envelope"), derived on first use and kept for the life
/// of the object. Content sealed under an older epoch (a download of a file written before a
/// rotation) and remote records of any epoch open through here; an epoch newer than the
/// current one is an integrity error until a verified envelope teaches it.
public final class EpochKeys: @unchecked Sendable {
    // SAFETY: `older` is read and written only with `lock` held; the rest is immutable.
    package let keyslots: KeyslotFile
    public let current: KeyHierarchy
    private let currentMaster: SecureBytes
    private var older: [UInt32: KeyHierarchy] = [:]
    private let lock = NSLock()

    package init(keyslots: KeyslotFile, keys: KeyHierarchy, masterKey: SecureBytes) {
        self.keyslots = keyslots; self.current = keys; self.currentMaster = masterKey
    }

    /// The keys of `epoch` (the current one, or an older one through the key history).
    public func keys(epoch: UInt32) throws -> KeyHierarchy {
        if epoch == current.epoch { return current }
        lock.lock(); defer { lock.unlock() }
        if let k = older[epoch] { return k }
        let master = try keyslots.masterKey(ofEpoch: epoch, current: currentMaster)
        let k = try KeyHierarchy(masterKey: master, vaultId: current.vaultId, epoch: epoch)
        older[epoch] = k
        return k
    }

    /// The blob wrap key of `epoch` (for a sealed header that names it).
    public func blobWrapKey(epoch: UInt32) throws -> SecureBytes { try keys(epoch: epoch).blobWrapKey }
}
