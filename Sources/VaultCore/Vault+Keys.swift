import Foundation
import VaultCrypto
import VaultPrimitives

/// Keyslots: list, add a recovery or escrow slot, remove a slot, change the password.
extension Vault {
    /// Writes the keyslot file atomically, authenticated with the current master key. A change
    /// of the slots (`bumpGeneration`) raises the envelope generation, so other devices can tell
    /// the newer envelope from an older one, and names this device as the one that changed it.
    func saveKeyslots(_ file: KeyslotFile, macKey: SecureBytes, bumpGeneration: Bool = true) throws {
        var file = file
        if bumpGeneration {
            file.body.generation = (file.body.generation ?? 0) + 1
            file.body.device = try remoteCodec.sealDeviceLabel(deviceLabel)
        }
        try POSIX.writeAtomically(try file.serialized(macKey: macKey), to: layout.keyslotFile)
        keyslots = file
    }

    /// A new slot id: the type and six random hex digits (`recovery-3fa91c`), so slots two
    /// devices add at once never share an id (an id is bound into its slot's wrapped key, so a
    /// merged envelope could not rename one).
    func nextSlotId(_ type: String, in slots: [KeyslotFile.Slot]) -> String {
        while true {
            let id = "\(type)-\(Hex.encode(SecureRandom.bytes(3)))"
            if !slots.contains(where: { $0.id == id }) { return id }
        }
    }

    /// This device's name in envelopes it changes (`KeyslotFile.Body.device`, sealed): the name
    /// chosen with `vault config set device-name` (as conflict copies and records carry it), else
    /// the host name.
    public var deviceLabel: String {
        if let chosen = try? setting(.deviceName), DeviceName.isValid(chosen) { return chosen }
        return Self.hostLabel
    }

    /// The host name, printable ASCII only, at most 64 bytes.
    static var hostLabel: String {
        var buf = [CChar](repeating: 0, count: 256)
        let name = gethostname(&buf, buf.count) == 0 ? String(cString: buf) : ""
        let ascii = String(name.unicodeScalars.map { (32...126).contains($0.value) && $0 != "\"" && $0 != "\\" ? Character($0) : "?" }.prefix(64))
        return ascii.isEmpty ? "a device" : ascii
    }

    /// Adds a recovery slot and returns its recovery key, to be shown once.
    public func addRecoverySlot() throws -> SecureBytes {
        let key = RecoveryKey.generate()
        var file = keyslots
        file.body.slots.append(try KeyslotFile.recoverySlot(id: nextSlotId("recovery", in: file.body.slots), recoveryKey: key,
                                                            masterKey: masterKey, vaultId: vaultId))
        try saveKeyslots(file, macKey: keys.keyslotMacKey)
        return key
    }

    /// Escrows the master key to an organisation's X25519 public key.
    @discardableResult
    public func addEscrowSlot(orgPublicKey: [UInt8]) throws -> String {
        var file = keyslots
        if file.body.slots.contains(where: { $0.type == "escrow" && $0.orgPublicKey == Hex.encode(orgPublicKey) }) {
            throw VaultError(.alreadyExists, "the vault is already escrowed to this organisation key")
        }
        let id = nextSlotId("escrow", in: file.body.slots)
        do {
            file.body.slots.append(try KeyslotFile.escrowSlot(id: id, orgPublicKey: orgPublicKey, masterKey: masterKey))
        } catch {
            throw VaultError(.usage, "not a valid X25519 public key")
        }
        try saveKeyslots(file, macKey: keys.keyslotMacKey)
        return id
    }

    /// Removes a slot while another that can unlock remains.
    public func removeSlot(_ id: String) throws {
        var file = keyslots
        guard let i = file.body.slots.firstIndex(where: { $0.id == id }) else {
            throw VaultError(.notFound, "no keyslot '\(id)'", hint: "see `vault key list`")
        }
        let remaining = file.body.slots.filter { $0.id != id }
        guard remaining.contains(where: { $0.type == "password" || $0.type == "recovery" }) else {
            throw VaultError(.conflict, "'\(id)' is the last slot you can unlock with; removing it would lock you out",
                             hint: "add another password or recovery slot first")
        }
        file.body.slots.remove(at: i)
        try saveKeyslots(file, macKey: keys.keyslotMacKey)
    }

    /// Rewraps the password slot that `current` opens under `new` (the master key is unchanged),
    /// with `kdf` (nil: that slot's KDF and costs, with a fresh salt).
    public func changePassword(current: SecureBytes, new: SecureBytes, kdf: KDFParameters?) throws {
        try changePassword(current: current, new: new) { kdf ?? $0.withFreshSalt }
    }

    /// Like `changePassword(current:new:kdf:)`; `kdf` maps the matched slot's parameters to the
    /// new slot's (it may keep them, raise them to a floor, or ignore them). Returns what it used.
    @discardableResult
    public func changePassword(current: SecureBytes, new: SecureBytes,
                               kdf: (_ slotKDF: KDFParameters) throws -> KDFParameters) throws -> KDFParameters {
        var file = keyslots
        var matched: Int?
        for (i, slot) in file.body.slots.enumerated() where slot.type == "password" {
            if try file.unwrapPassword(slot: slot, typed: current) != nil { matched = i; break }
        }
        guard let i = matched, let old = try file.body.slots[i].kdf?.parameters() else {
            throw VaultError(.wrongPassword, "the current password is wrong", hint: "nothing was changed")
        }
        let params = try kdf(old)
        file.body.slots[i] = try KeyslotFile.passwordSlot(id: file.body.slots[i].id, password: new, kdf: params,
                                                          masterKey: masterKey, vaultId: vaultId)
        try saveKeyslots(file, macKey: keys.keyslotMacKey)
        return params
    }

    /// Rewraps password slot `id`, which opened only with the bytes as typed (written before
    /// passwords were normalised), under the NFC form of `password`: same KDF and costs, fresh
    /// salt. Never beside a running sync (the keyslot file is not ours to write then) or on a
    /// read-only filesystem.
    public func upgradePasswordSlot(_ id: String, password: SecureBytes) throws {
        guard !isBesideSync, !isReadOnly, let i = keyslots.body.slots.firstIndex(where: { $0.id == id }),
              let params = try keyslots.body.slots[i].kdf?.parameters() else { return }
        var file = keyslots
        file.body.slots[i] = try KeyslotFile.passwordSlot(id: id, password: password, kdf: params.withFreshSalt,
                                                          masterKey: masterKey, vaultId: vaultId)
        try saveKeyslots(file, macKey: keys.keyslotMacKey)
    }

    /// Adds a password slot (e.g. after an administrator recovered the vault with the escrow key).
    public func setPassword(_ new: SecureBytes, kdf: KDFParameters, replacingAll: Bool) throws {
        var file = keyslots
        if replacingAll { file.body.slots.removeAll { $0.type == "password" } }
        file.body.slots.append(try KeyslotFile.passwordSlot(id: nextSlotId("password", in: file.body.slots), password: new,
                                                            kdf: kdf, masterKey: masterKey, vaultId: vaultId))
        try saveKeyslots(file, macKey: keys.keyslotMacKey)
    }
}

extension Vault {
    /// Seals and opens what the server stores about nodes (names, records) under this vault's keys.
    public var remoteCodec: RemoteCodec { RemoteCodec(epochs: epochs) }
}
