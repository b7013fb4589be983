import Foundation
import VaultCrypto
import VaultPrimitives

/// The key envelope (SECURITY.md "Envelope"): this vault's keyslot file as the server keeps it,
/// and the checks an envelope from the server passes before this device uses it. The sync layer
/// moves the bytes (`EnvelopeSync`); every decision about their trust is made here.
extension Vault {
    /// The envelope to upload: the keyslot file's bytes as on disk (never during a rotation), or,
    /// when it holds slots bound to this machine (tpm2), the file without them (MAC'd again):
    /// those never leave this device.
    public func envelopeBytes() throws -> [UInt8] {
        guard keyslots.body.pendingRotation == nil else {
            throw VaultError(.conflict, "a key rotation is in progress", hint: "run any vault command to finish it, then sync")
        }
        if keyslots.deviceLocalSlots.isEmpty { return try POSIX.readFile(layout.keyslotFile) }
        return try KeyslotFile(body: keyslots.portableBody).serialized(macKey: keys.keyslotMacKey)
    }

    /// `file` (an envelope: no machine-bound slots) with this device's tpm2 slots added back.
    func keepingMachineBoundSlots(_ file: KeyslotFile) -> KeyslotFile {
        var kept = file
        kept.body.slots += keyslots.deviceLocalSlots
        return kept
    }

    /// Checks an envelope of this vault that the server holds: everything `EnvelopeCheck.precheck`
    /// checks, then the vault id, the epoch and generation against `seen` (the envelope this
    /// device last agreed on with the server: older is a rollback, the same generation must be the
    /// same bytes), a newer epoch than this vault's (`EnvelopeRotated`), and the MAC under the key
    /// of its epoch. Before any envelope was seen, another vault's is a `.conflict` (the account
    /// is someone's other vault); after, it is an integrity error (the server swapped it).
    public func verifyEnvelope(_ bytes: [UInt8], seen: (file: KeyslotFile, bytes: [UInt8])?, policy: EffectivePolicy) throws -> KeyslotFile {
        let file = try EnvelopeCheck.precheck(bytes, policy: policy)
        guard file.body.vaultId == vaultId else {
            if seen != nil { throw EnvelopeCheck.refused("it belongs to another vault (\(file.body.vaultId.prefix(8))…)") }
            throw VaultError(.conflict, "this account holds another vault: use `vault join` in an empty VAULT_HOME",
                             hint: "`VAULT_HOME=/another/folder vault join --server URL --user NAME` uses that vault on this device; or log in to another account")
        }
        if let seen {
            guard file.body.epoch >= seen.file.body.epoch else {
                throw EnvelopeCheck.refused("its key epoch \(file.body.epoch) is older than epoch \(seen.file.body.epoch), which this device has seen (a rollback)")
            }
            let gen = file.body.generation ?? 0, seenGen = seen.file.body.generation ?? 0
            guard gen >= seenGen else {
                throw EnvelopeCheck.refused("its generation \(gen) is older than generation \(seenGen), which this device has seen (a rollback)")
            }
            guard gen > seenGen || constantTimeEqual(bytes, seen.bytes) else {
                throw EnvelopeCheck.refused("it differs from the envelope of the same generation (\(gen)) this device has seen")
            }
        }
        if file.body.epoch > keys.epoch { throw EnvelopeRotated(device: remoteCodec.openDeviceLabel(file.body.device), epoch: file.body.epoch) }
        do { try KeyslotFile.verify(bytes: bytes, macKey: try epochs.keys(epoch: file.body.epoch).keyslotMacKey) } catch {
            throw EnvelopeCheck.refused("its MAC does not verify under this vault's key (forged or altered)")
        }
        return file
    }

    /// Replaces the keyslot file with a verified envelope of the same epoch (a newer generation
    /// another device wrote), byte for byte, this device's tpm2 slots kept.
    public func adoptEnvelope(_ bytes: [UInt8]) throws {
        let file = try KeyslotFile.parse(bytes)
        guard file.body.epoch == keys.epoch, file.body.vaultId == vaultId, file.body.pendingRotation == nil else {
            throw VaultError(.internalError, "adoptEnvelope takes a verified envelope of the current epoch")
        }
        try KeyslotFile.verify(bytes: bytes, macKey: keys.keyslotMacKey)
        if keyslots.deviceLocalSlots.isEmpty {
            try POSIX.writeAtomically(bytes, to: layout.keyslotFile)
            keyslots = file
        } else {
            try saveKeyslots(keepingMachineBoundSlots(file), macKey: keys.keyslotMacKey, bumpGeneration: false)
        }
    }

    /// Re-applies this device's slot changes (since `base`, the envelope both devices last
    /// agreed on) on top of `theirs` (a newer envelope another device wrote, verified), writes
    /// the result as the keyslot file with a generation above both, and returns notes for the
    /// user (slots that could not be carried over). See `KeyslotMerge`.
    @discardableResult
    public func mergeEnvelope(base: KeyslotFile?, theirs: KeyslotFile) throws -> [String] {
        let merged = try KeyslotMerge.merge(base: base?.body, local: keyslots.portableBody, theirs: theirs.body) { slot in
            guard let pk = slot.orgPublicKey.flatMap(Hex.decode) else { return nil }
            return try KeyslotFile.escrowSlot(id: slot.id, orgPublicKey: pk, masterKey: masterKey)
        }
        var file = keyslots
        file.body.slots = merged.slots + keyslots.deviceLocalSlots
        file.body.generation = max(keyslots.body.generation ?? 0, theirs.body.generation ?? 0)
        try saveKeyslots(file, macKey: keys.keyslotMacKey)   // + 1, this device
        return merged.notes
    }
}

/// The server's envelope is of a newer key epoch: another device rotated the master key. This
/// device must unlock that epoch with the password (`vault unlock`) before it syncs again.
public struct EnvelopeRotated: Error, Sendable {
    /// The name of the device that rotated, when this device can open it (not yet verified).
    public var device: String?
    public var epoch: UInt32

    public var error: VaultError {
        VaultError(.locked, "the vault key was rotated on \(device ?? "another device"): unlock again (`vault unlock`)",
                   hint: "`vault unlock` asks for the vault password, checks the new key against this device's, and re-keys this device; nothing was synced")
    }
}

/// The checks of an envelope that need no key, made before any password is tried.
public enum EnvelopeCheck {
    /// Parses `bytes` and refuses what no device may accept: another format, a damaged file, a
    /// pending rotation, KDF parameters out of bounds or below the policy's floors, a generation
    /// or device field that cannot be right.
    public static func precheck(_ bytes: [UInt8], policy: EffectivePolicy) throws -> KeyslotFile {
        guard bytes.count <= 64 << 10 else { throw refused("it is longer than 64 KiB") }
        if let line = bytes.split(separator: 10, maxSplits: 1).first,
           let raw = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
           let format = raw["format"] as? Int, format != 1 {
            throw refused("it is in format \(format); this vault reads format 1 only")
        }
        let file: KeyslotFile
        do { file = try KeyslotFile.parse(bytes) } catch { throw refused("it is damaged or not a keyslot file") }
        guard file.body.pendingRotation == nil else { throw refused("it carries a rotation in progress") }
        if let d = file.body.device, d.utf8.count > 256 || !d.utf8.allSatisfy({ (32...126).contains($0) }) {
            throw refused("its device member is not printable ASCII of at most 256 bytes")
        }
        guard file.body.slots.contains(where: { $0.type == "password" || $0.type == "recovery" }) else {
            throw refused("it has no password or recovery slot")
        }
        for slot in file.body.slots {
            guard let kdf = slot.kdf else { continue }
            let params: KDFParameters
            do { params = try kdf.parameters() } catch { throw refused("slot \(slot.id) has KDF parameters out of bounds") }
            do { try policy.checkKDF(params) } catch let e as VaultError {
                throw refused("slot \(slot.id) is weaker than the policy allows (\(e.message))")
            }
        }
        return file
    }

    /// The integrity error for an envelope this device refuses.
    public static func refused(_ why: String) -> VaultError {
        VaultError(.integrity, "the server's key envelope was refused: \(why)",
                   hint: "nothing was changed on this device; the server may be faulty or malicious")
    }
}
