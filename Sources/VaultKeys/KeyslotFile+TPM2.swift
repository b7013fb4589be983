import Foundation
import VaultCrypto
import VaultPrimitives

/// The `tpm2` slot (SECURITY.md "Keyslot file"): a random 32-byte slot secret sealed by this
/// machine's TPM, the master key wrapped under a KEK derived from it. The TPM's part (sealing,
/// unsealing) is VaultTPM's; this is the format: what is stored, what the wrap is bound to.
extension KeyslotFile {
    /// What a tpm2 slot stores about its sealed secret, all of it bound into the slot's AAD.
    public struct TPM2Record: Codable, Equatable, Sendable {
        /// hex TPM2B_PUBLIC and TPM2B_PRIVATE of the sealed object, as tpm2-tss marshals them.
        public var publicArea: String
        public var privateArea: String
        /// The SHA-256 PCRs the object's policy is bound to, ascending (empty: none).
        public var pcrs: [Int]
        /// True when the object's auth value is derived from a PIN.
        public var pin: Bool
        /// hex name of the TPM's primary key: tells this machine's TPM from another's.
        public var primaryName: String

        public init(publicArea: [UInt8], privateArea: [UInt8], pcrs: [Int], pin: Bool, primaryName: [UInt8]) {
            self.publicArea = Hex.encode(publicArea); self.privateArea = Hex.encode(privateArea)
            self.pcrs = pcrs; self.pin = pin; self.primaryName = Hex.encode(primaryName)
        }

        /// The decoded areas and primary name; `.integrity` when a field cannot be right.
        public func decoded() throws -> (publicArea: [UInt8], privateArea: [UInt8], primaryName: [UInt8]) {
            guard let pub = Hex.decode(publicArea), let priv = Hex.decode(privateArea), let name = Hex.decode(primaryName),
                  !pub.isEmpty, !priv.isEmpty, !name.isEmpty,
                  pcrs.allSatisfy({ (0..<24).contains($0) }), zip(pcrs, pcrs.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw VaultError(.integrity, "the TPM slot is damaged or was altered",
                                 hint: "remove it (`vault key remove`) and enroll again with `vault key add-tpm`")
            }
            return (pub, priv, name)
        }

        /// The canonical text bound into the slot's AAD:
        /// `tpm2:pcrs=<list>:pin=<0|1>:primary=<primaryName>:object=<hex SHA-256(public ‖ private)>`.
        package var canonical: String {
            var h = SHA256Hasher()
            h.update(Hex.decode(publicArea) ?? Array(publicArea.utf8))
            h.update(Hex.decode(privateArea) ?? Array(privateArea.utf8))
            return "tpm2:pcrs=\(pcrs.map(String.init).joined(separator: ",")):pin=\(pin ? 1 : 0):primary=\(primaryName):object=\(Hex.encode(h.finalize()))"
        }
    }

    /// The slot type of a slot bound to one machine's TPM.
    public static let tpm2Type = "tpm2"

    /// KEK = HKDF-SHA256(slot secret, salt vaultId, "vault/v1/tpm2-kek", 32).
    static func tpm2KEK(_ secret: SecureBytes, vaultId: [UInt8]) throws -> SecureBytes {
        try hardwareKEK(secret, vaultId: vaultId, type: tpm2Type)
    }

    /// The KEK of a slot whose secret hardware gives back (tpm2, fido2):
    /// HKDF-SHA256(secret, salt vaultId, "vault/v1/<type>-kek", 32).
    static func hardwareKEK(_ secret: SecureBytes, vaultId: [UInt8], type: String) throws -> SecureBytes {
        try HKDF.sha256(ikm: secret, salt: vaultId, info: Array("vault/v1/\(type)-kek".utf8), length: 32)
    }

    /// The master key from hardware slot `slot` (of `type`, its record present) with the secret
    /// the hardware gave back. `.integrity` when it does not open: the hardware answered, so the
    /// slot was altered. `what` names it ("TPM", "FIDO2"), `command` is how to enroll again.
    func unlock(hardwareSlot slot: Slot, type: String, hasRecord: Bool, secret: SecureBytes, what: String, command: String) throws -> SecureBytes {
        guard slot.type == type, slot.kdf == nil, hasRecord,
              let mk = unwrap(slot: slot, kek: try Self.hardwareKEK(secret, vaultId: vaultId, type: type)) else {
            throw VaultError(.integrity, "the \(what) slot \(slot.id) is damaged or was altered (its wrapped key does not open)",
                             hint: "remove it (`vault key remove \(slot.id)`) and enroll again with `\(command)`")
        }
        return mk
    }

    /// The TPM auth value of a PIN: HKDF-SHA256(NFC(PIN), salt vaultId, "vault/v1/tpm2-pin", 32).
    public static func tpm2PINAuth(_ pin: SecureBytes, vaultId: [UInt8]) throws -> SecureBytes {
        try HKDF.sha256(ikm: PasswordText.normalized(pin), salt: vaultId, info: Array("vault/v1/tpm2-pin".utf8), length: 32)
    }

    /// A tpm2 slot wrapping `masterKey` under the KEK of `secret` (what `record` seals).
    package static func tpm2Slot(id: String, record: TPM2Record, secret: SecureBytes, masterKey: SecureBytes, vaultId: String) throws -> Slot {
        let kek = try tpm2KEK(secret, vaultId: Hex.decode(vaultId) ?? [])
        return try makeSlot(id: id, type: tpm2Type, kdf: nil, tpm2: record, kek: kek, masterKey: masterKey, vaultId: vaultId)
    }

    /// The master key from tpm2 `slot` with the secret the TPM unsealed. `.integrity` when it does
    /// not open: the TPM gave back the secret it sealed, so the slot was altered.
    public func unlock(tpm2Slot slot: Slot, secret: SecureBytes) throws -> SecureBytes {
        try unlock(hardwareSlot: slot, type: Self.tpm2Type, hasRecord: slot.tpm2 != nil, secret: secret, what: "TPM", command: "vault key add-tpm")
    }

    /// The slot types that stay on the device that enrolled them (never in the envelope).
    public static let deviceLocalTypes: Set<String> = [tpm2Type, fido2Type]

    /// This file's body without the slots of this device only (tpm2, fido2): what other devices see.
    public var portableBody: Body {
        var b = body
        b.slots.removeAll { Self.deviceLocalTypes.contains($0.type) }
        return b
    }

    /// The slots of this device only (tpm2, fido2), which never travel in the envelope.
    public var deviceLocalSlots: [Slot] { body.slots.filter { Self.deviceLocalTypes.contains($0.type) } }

    /// The slots bound to this machine (tpm2), which never travel in the envelope.
    public var machineBoundSlots: [Slot] { body.slots.filter { $0.type == Self.tpm2Type } }
}
