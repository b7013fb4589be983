import Foundation
import VaultCrypto

/// Catching up with a rotation another device made (SECURITY.md "Envelope"): the server's
/// envelope holds a newer epoch; the user unlocks it with the password (or a recovery key), its
/// key history must lead back to this device's own master key (so the server cannot substitute
/// a key it chose), and this device then runs its local rotation to that key — the same
/// crash-safe steps as `vault key rotate`, with the new master and the envelope's slots given.
extension Vault {
    /// Where a newer envelope waits while this device is not yet re-keyed (public data: what
    /// the server holds). `vault unlock` uses it when the password changed along with the key.
    static func pendingEnvelopePath(_ layout: VaultLayout) -> String { layout.path("envelope.pending") }

    /// Keeps a newer-epoch envelope the server sent, for `vault unlock`.
    public func keepPendingEnvelope(_ bytes: [UInt8]) throws {
        try POSIX.writeAtomically(bytes, to: Self.pendingEnvelopePath(layout))
    }

    /// The master key of a newer epoch that `secret` opens in `envelope` (password or recovery
    /// slots), with the envelope's MAC verified under it. `.wrongPassword` when nothing opens.
    public static func unlockEnvelope(_ envelope: KeyslotFile, bytes: [UInt8], password: SecureBytes?,
                                      recoveryKey: SecureBytes?) throws -> SecureBytes {
        let master: SecureBytes
        if let recoveryKey { master = try envelope.unlock(recoveryKey: recoveryKey) }
        else if let password { master = try envelope.unlock(password: password) }
        else { throw VaultError(.usage, "a password or a recovery key is needed") }
        let keys = try KeyHierarchy(masterKey: master, vaultId: envelope.vaultId, epoch: envelope.body.epoch)
        do { try KeyslotFile.verify(bytes: bytes, macKey: keys.keyslotMacKey) } catch {
            throw EnvelopeCheck.refused("its MAC does not verify under the key its own slot opens (forged or altered)")
        }
        return master
    }

    /// The master key of this vault's epoch, reached from `newMaster` of the newer `envelope`
    /// through its key history and proven by this vault's keyslot MAC: the history must chain to
    /// this vault's own key (a server that made up a key fails here). Refused: exit 6.
    static func olderMaster(from envelope: KeyslotFile, newMaster: SecureBytes, local: KeyslotFile, localBytes: [UInt8]) throws -> SecureBytes {
        guard envelope.body.vaultId == local.body.vaultId, envelope.body.epoch > local.body.epoch else {
            throw EnvelopeCheck.refused("it is not a newer epoch of this vault")
        }
        let old: SecureBytes
        do { old = try envelope.masterKey(ofEpoch: local.body.epoch, current: newMaster) } catch {
            throw EnvelopeCheck.refused("its key history does not lead back to this device's key (epoch \(local.body.epoch))")
        }
        let oldKeys = try KeyHierarchy(masterKey: old, vaultId: local.vaultId, epoch: local.body.epoch)
        do { try KeyslotFile.verify(bytes: localBytes, macKey: oldKeys.keyslotMacKey) } catch {
            throw EnvelopeCheck.refused("its key history does not lead to this device's key: the server may have made up the new key")
        }
        return old
    }

    /// This device's master key from the pending envelope (`keepPendingEnvelope`) when `secret`
    /// opens only the newer slots there (the password changed on the device that rotated).
    /// Nil when there is no pending envelope or it does not open.
    static func masterThroughPendingEnvelope(_ layout: VaultLayout, local: KeyslotFile, localBytes: [UInt8], password: SecureBytes?,
                                             recoveryKey: SecureBytes?, policy: EffectivePolicy) -> SecureBytes? {
        guard let bytes = try? POSIX.readFile(pendingEnvelopePath(layout)),
              let env = try? EnvelopeCheck.precheck(bytes, policy: policy), env.body.epoch > local.body.epoch,
              let newMaster = try? unlockEnvelope(env, bytes: bytes, password: password, recoveryKey: recoveryKey) else { return nil }
        return try? olderMaster(from: env, newMaster: newMaster, local: local, localBytes: localBytes)
    }

    /// Re-keys this device to the newer epoch of `bytes` (checked with `EnvelopeCheck.precheck`
    /// by the caller), whose `newMaster` the user unlocked (`unlockEnvelope`): verifies that its
    /// history leads back to this vault's key, then rotates locally to it, ending with the
    /// envelope itself as the keyslot file. Crash-safe like `vault key rotate`.
    public func adoptRotation(envelope bytes: [UInt8], newMaster: SecureBytes) throws -> RotationResult {
        guard keyslots.body.pendingRotation == nil else { throw VaultError(.conflict, "a rotation is already in progress") }
        let env = try KeyslotFile.parse(bytes)
        _ = try Self.olderMaster(from: env, newMaster: newMaster, local: keyslots, localBytes: try POSIX.readFile(layout.keyslotFile))
        let stats = try runRotation(.init(epoch: env.body.epoch, nonce: "", wrappedNewMaster: "", slots: env.body.slots,
                                          historyEntry: nil, generation: env.body.generation ?? 0, history: env.body.history ?? [],
                                          device: env.body.device), newMaster: newMaster)
        unlink(Self.pendingEnvelopePath(layout))
        return RotationResult(epoch: env.body.epoch, recoveryKeys: [], rewrappedBlobs: stats.rewrapped, droppedSlots: [],
                              damagedBlobs: stats.damaged)
    }
}
