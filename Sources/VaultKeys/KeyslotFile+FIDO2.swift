import Foundation
import VaultCrypto
import VaultPrimitives

/// The `fido2` slot (SECURITY.md "Keyslot file"): the master key wrapped under a KEK derived from
/// a FIDO2 security key's hmac-secret output for the slot's salt. The key's part (the credential,
/// the assertion) is VaultFIDO2's; this is the format: what is stored, what the wrap is bound to.
/// Like a tpm2 slot it stays on the device that enrolled it (not in the envelope).
extension KeyslotFile {
    /// What a fido2 slot stores, all of it bound into the slot's AAD.
    public struct FIDO2Record: Codable, Equatable, Sendable {
        /// The relying party id the credential was made for.
        public var rp: String
        /// hex credential id, as the authenticator returned it (non-discoverable: the key needs it).
        public var credentialId: String
        /// hex, 32 bytes: the hmac-secret salt (random per slot).
        public var salt: String
        /// True when the slot was enrolled with the key's PIN: the assertion is then made with it
        /// (user verification; a CTAP 2.1 key answers another output without it).
        public var pin: Bool

        public init(rp: String, credentialId: [UInt8], salt: [UInt8], pin: Bool) {
            self.rp = rp; self.credentialId = Hex.encode(credentialId); self.salt = Hex.encode(salt); self.pin = pin
        }

        /// The decoded credential id and salt; `.integrity` when a field cannot be right.
        public func decoded() throws -> (credentialId: [UInt8], salt: [UInt8]) {
            guard let id = Hex.decode(credentialId), let s = Hex.decode(salt), !id.isEmpty, id.count <= 1023, s.count == 32,
                  !rp.isEmpty, !rp.contains(":") else {
                throw VaultError(.integrity, "the FIDO2 slot is damaged or was altered",
                                 hint: "remove it (`vault key remove`) and enroll again with `vault key add-fido2`")
            }
            return (id, s)
        }

        /// The canonical text bound into the slot's AAD:
        /// `fido2:rp=<rp>:pin=<0|1>:cred=<hex credentialId>:salt=<hex salt>`.
        package var canonical: String { "fido2:rp=\(rp):pin=\(pin ? 1 : 0):cred=\(credentialId):salt=\(salt)" }
    }

    /// The slot type of a slot a FIDO2 security key opens.
    public static let fido2Type = "fido2"

    /// The relying party id of the credentials vault makes.
    public static let fido2RelyingParty = "vault"

    /// A fido2 slot wrapping `masterKey` under the KEK of `secret` (the hmac-secret output for
    /// `record`'s salt): KEK = HKDF-SHA256(secret, salt vaultId, "vault/v1/fido2-kek", 32).
    package static func fido2Slot(id: String, record: FIDO2Record, secret: SecureBytes, masterKey: SecureBytes, vaultId: String) throws -> Slot {
        let kek = try hardwareKEK(secret, vaultId: Hex.decode(vaultId) ?? [], type: fido2Type)
        return try makeSlot(id: id, type: fido2Type, kdf: nil, fido2: record, kek: kek, masterKey: masterKey, vaultId: vaultId)
    }

    /// The master key from fido2 `slot` with the hmac-secret output the key gave. `.integrity`
    /// when it does not open: the key answered for its credential, so the slot was altered.
    public func unlock(fido2Slot slot: Slot, secret: SecureBytes) throws -> SecureBytes {
        try unlock(hardwareSlot: slot, type: Self.fido2Type, hasRecord: slot.fido2 != nil, secret: secret, what: "FIDO2", command: "vault key add-fido2")
    }

    /// The slots a FIDO2 security key opens.
    public var fido2Slots: [Slot] { body.slots.filter { $0.type == Self.fido2Type } }
}
