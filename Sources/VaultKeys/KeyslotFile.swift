import Foundation
import VaultCrypto
import VaultPrimitives

/// The keyslot file: the vault id, the master-key epoch, and one or more slots, each holding the
/// master key wrapped under a key-encryption key. Format (SECURITY.md §Keyslot file):
///
///     line 1: compact JSON body (KeyslotFile.Body)
///     line 2: "sha256:" + hex(SHA-256(line 1 bytes))          (detects accidental damage before any password is tried)
///     line 3: "hmac-sha256:" + hex(HMAC-SHA256(keyslotMacKey, line 1 bytes))   (detects deliberate change)
///
/// Each wrapped master key is AES-256-GCM under the slot's KEK with AAD binding it to the vault,
/// the slot id and type and the KDF parameters, so no field can be changed undetected.
public struct KeyslotFile: Sendable {
    public struct KDFRecord: Codable, Equatable, Sendable {
        public var alg: String            // "argon2id" | "pbkdf2-sha512"
        public var opsLimit: UInt64?
        public var memLimitBytes: UInt64?
        public var iterations: UInt32?
        public var salt: String           // hex

        init(_ p: KDFParameters) {
            switch p {
            case .argon2id(let ops, let mem, let salt):
                alg = "argon2id"; opsLimit = ops; memLimitBytes = mem; iterations = nil; self.salt = Hex.encode(salt)
            case .pbkdf2SHA512(let it, let salt):
                alg = "pbkdf2-sha512"; opsLimit = nil; memLimitBytes = nil; iterations = it; self.salt = Hex.encode(salt)
            }
        }

        /// The parameters, checked before any work against the bounds a stored parameter set may
        /// name (`KDFParameters.storageProblem`): a tampered file must not exhaust memory or time.
        package func parameters() throws -> KDFParameters {
            guard let s = Hex.decode(salt) else { throw VaultError(.integrity, "keyslot KDF salt is damaged") }
            let p: KDFParameters
            switch alg {
            case "argon2id":
                guard let o = opsLimit, let m = memLimitBytes else { throw VaultError(.integrity, "keyslot Argon2id parameters are missing") }
                p = .argon2id(opsLimit: o, memLimitBytes: m, salt: s)
            case "pbkdf2-sha512":
                guard let i = iterations else { throw VaultError(.integrity, "keyslot PBKDF2 iterations are missing") }
                p = .pbkdf2SHA512(iterations: i, salt: s)
            default:
                throw VaultError(.integrity, "keyslot uses an unknown KDF '\(alg)'")
            }
            if let problem = p.storageProblem { throw VaultError(.integrity, "keyslot KDF parameters are out of range: \(problem)") }
            return p
        }

        /// The canonical text bound into the slot's AAD.
        package var canonical: String {
            switch alg {
            case "argon2id": return "argon2id:ops=\(opsLimit ?? 0):mem=\(memLimitBytes ?? 0):salt=\(salt)"
            default: return "\(alg):iter=\(iterations ?? 0):salt=\(salt)"
            }
        }
    }

    public struct Slot: Codable, Equatable, Sendable {
        public var id: String
        /// "password", "recovery", "escrow", "tpm2" or "fido2".
        public var type: String
        public var kdf: KDFRecord?
        /// hex, 12 bytes (password, recovery and tpm2 slots)
        public var nonce: String?
        /// hex, 48 bytes: AES-256-GCM(KEK, nonce, masterKey, aad) (password, recovery and tpm2 slots)
        public var wrappedKey: String?
        /// hex X25519 public key of the organisation (escrow slots)
        public var orgPublicKey: String?
        /// hex crypto_box_seal(masterKey, orgPublicKey), 80 bytes (escrow slots)
        public var sealed: String?
        public var createdAt: Int64
        /// The sealed slot secret and what it is bound to (tpm2 slots; this machine only).
        public var tpm2: TPM2Record?
        /// The credential and salt a FIDO2 security key answers for (fido2 slots; this device only).
        public var fido2: FIDO2Record?
    }

    /// A master-key rotation in progress (SECURITY.md "Key rotation"): the new master key wrapped
    /// under a key derived from the old one, and the slots that will replace the current ones.
    public struct PendingRotation: Codable, Equatable, Sendable {
        public var epoch: UInt32
        public var nonce: String
        public var wrappedNewMaster: String
        public var slots: [Slot]
        /// The history entry of the epoch being replaced, wrapped under the new epoch's history key.
        public var historyEntry: HistoryEntry?
        /// A rotation adopted from another device's envelope: the generation and the whole key
        /// history the final file takes from it (nil for a rotation made here).
        public var generation: UInt64?
        public var history: [HistoryEntry]?
        /// The device the final file names (`Body.device`).
        public var device: String?

        package init(epoch: UInt32, nonce: String, wrappedNewMaster: String, slots: [Slot], historyEntry: HistoryEntry? = nil,
                     generation: UInt64? = nil, history: [HistoryEntry]? = nil, device: String? = nil) {
            self.epoch = epoch; self.nonce = nonce; self.wrappedNewMaster = wrappedNewMaster; self.slots = slots
            self.historyEntry = historyEntry; self.generation = generation; self.history = history; self.device = device
        }
    }

    /// The master key of an earlier epoch, wrapped under the next epoch's history key, so a device
    /// holding the current key reaches every older one (and never the reverse).
    public struct HistoryEntry: Codable, Equatable, Sendable {
        public var epoch: UInt32
        /// hex, 12 bytes
        public var nonce: String
        /// hex, 48 bytes: GCM(historyKey of epoch + 1, nonce, master key of `epoch`, historyAAD)
        public var wrappedKey: String

        package init(epoch: UInt32, nonce: String, wrappedKey: String) {
            self.epoch = epoch; self.nonce = nonce; self.wrappedKey = wrappedKey
        }
    }

    public struct Body: Codable, Equatable, Sendable {
        public var format: Int
        public var vaultId: String
        public var epoch: UInt32
        public var slots: [Slot]
        public var pendingRotation: PendingRotation?
        /// +1 at every change of the slots or the epoch, so a device can refuse an older envelope.
        /// Absent in files written before end-to-end encryption (read as 0).
        public var generation: UInt64?
        /// One entry per earlier epoch (absent: none).
        public var history: [HistoryEntry]?
        /// The name of the device that last changed the slots or the epoch, sealed under the epoch
        /// before the change (`RemoteCodec.sealDeviceLabel`): shown to other devices ("rotated on
        /// DEVICE") before the new envelope can be verified.
        public var device: String?

        package init(format: Int, vaultId: String, epoch: UInt32, slots: [Slot], pendingRotation: PendingRotation? = nil,
                     generation: UInt64? = nil, history: [HistoryEntry]? = nil, device: String? = nil) {
            self.format = format; self.vaultId = vaultId; self.epoch = epoch; self.slots = slots
            self.pendingRotation = pendingRotation; self.generation = generation; self.history = history; self.device = device
        }
    }

    public var body: Body

    package init(body: Body) { self.body = body }

    public var vaultId: [UInt8] { Hex.decode(body.vaultId) ?? [] }

    /// The AAD of a history entry: `vault-history-v1|<vaultId>|<epoch>`.
    static func historyAAD(vaultId: String, epoch: UInt32) -> [UInt8] {
        Array("vault-history-v1|\(vaultId)|\(epoch)".utf8)
    }

    /// Wraps `oldMaster` (of `oldEpoch`) under `newKeys`' history key.
    package static func historyEntry(oldMaster: SecureBytes, oldEpoch: UInt32, newKeys: KeyHierarchy, vaultId: String) throws -> HistoryEntry {
        let nonce = SecureRandom.bytes(12)
        let wrapped = try AESGCMKey(newKeys.historyKey).seal(nonce: nonce, secret: oldMaster, aad: historyAAD(vaultId: vaultId, epoch: oldEpoch))
        return HistoryEntry(epoch: oldEpoch, nonce: Hex.encode(nonce), wrappedKey: Hex.encode(wrapped))
    }

    /// The master key of `epoch`, walking the history down from `current` (the master key of
    /// `body.epoch`). Throws `.integrity` when the chain is broken or does not authenticate.
    public func masterKey(ofEpoch epoch: UInt32, current: SecureBytes) throws -> SecureBytes {
        guard epoch <= body.epoch else {
            throw VaultError(.integrity, "content sealed under key epoch \(epoch), newer than this vault's \(body.epoch): either the vault key was rotated on another device, or the content is damaged or was tampered with",
                             hint: "run `vault sync` (or `vault unlock`) to learn a newer key; if the error stays, restore the file from the server or a backup")
        }
        var key = current
        var e = body.epoch
        while e > epoch {
            guard let entry = body.history?.first(where: { $0.epoch == e - 1 }),
                  let nonce = Hex.decode(entry.nonce), let ct = Hex.decode(entry.wrappedKey) else {
                throw VaultError(.integrity, "the key history has no entry for epoch \(e - 1)")
            }
            let keys = try KeyHierarchy(masterKey: key, vaultId: vaultId, epoch: e)
            do {
                key = try AESGCMKey(keys.historyKey).open(nonce: nonce, ciphertextAndTag: ct, aad: Self.historyAAD(vaultId: body.vaultId, epoch: e - 1))
            } catch {
                throw VaultError(.integrity, "the key history entry of epoch \(e - 1) does not authenticate")
            }
            e -= 1
        }
        return key
    }

    static func aad(vaultId: String, slot: Slot) -> [UInt8] {
        Array("vault-keyslot-v1|\(vaultId)|\(slot.id)|\(slot.type)|\(slot.kdf?.canonical ?? slot.tpm2?.canonical ?? slot.fido2?.canonical ?? "")".utf8)
    }

    /// Wraps `masterKey` under `kek` into a new slot.
    static func makeSlot(id: String, type: String, kdf: KDFRecord?, tpm2: TPM2Record? = nil, fido2: FIDO2Record? = nil, kek: SecureBytes,
                         masterKey: SecureBytes, vaultId: String) throws -> Slot {
        let nonce = SecureRandom.bytes(12)
        var slot = Slot(id: id, type: type, kdf: kdf, nonce: Hex.encode(nonce), wrappedKey: "",
                        createdAt: Int64(Date().timeIntervalSince1970), tpm2: tpm2, fido2: fido2)
        let wrapped = try AESGCMKey(kek).seal(nonce: nonce, secret: masterKey, aad: aad(vaultId: vaultId, slot: slot))
        slot.wrappedKey = Hex.encode(wrapped)
        return slot
    }

    /// A password slot for `password` (as typed: its NFC form is what the KDF takes), with `kdf`
    /// parameters. Refuses parameters a reader would refuse (the slot could never be opened).
    package static func passwordSlot(id: String, password: SecureBytes, kdf: KDFParameters, masterKey: SecureBytes, vaultId: String) throws -> Slot {
        if let problem = kdf.storageProblem {
            throw VaultError(.usage, "\(problem): a keyslot with these KDF parameters could never be opened; nothing was changed")
        }
        let kek = try KDF.derive(password: PasswordText.normalized(password), parameters: kdf, length: 32)
        return try makeSlot(id: id, type: "password", kdf: .init(kdf), kek: kek, masterKey: masterKey, vaultId: vaultId)
    }

    /// The KEK of a recovery key: HKDF-SHA256(recovery key, salt vaultId, "vault/v1/recovery-kek").
    static func recoveryKEK(_ recoveryKey: SecureBytes, vaultId: [UInt8]) throws -> SecureBytes {
        try HKDF.sha256(ikm: recoveryKey, salt: vaultId, info: Array("vault/v1/recovery-kek".utf8), length: 32)
    }

    package static func recoverySlot(id: String, recoveryKey: SecureBytes, masterKey: SecureBytes, vaultId: String) throws -> Slot {
        let kek = try recoveryKEK(recoveryKey, vaultId: Hex.decode(vaultId) ?? [])
        return try makeSlot(id: id, type: "recovery", kdf: nil, kek: kek, masterKey: masterKey, vaultId: vaultId)
    }

    package static func escrowSlot(id: String, orgPublicKey: [UInt8], masterKey: SecureBytes) throws -> Slot {
        Slot(id: id, type: "escrow", kdf: nil, nonce: nil, wrappedKey: nil, orgPublicKey: Hex.encode(orgPublicKey),
             sealed: Hex.encode(try SealedBox.seal(masterKey, to: orgPublicKey)), createdAt: Int64(Date().timeIntervalSince1970))
    }

    /// Opens the vault's master key with a recovery key.
    public func unlock(recoveryKey: SecureBytes) throws -> SecureBytes {
        let kek = try Self.recoveryKEK(recoveryKey, vaultId: vaultId)
        for slot in body.slots where slot.type == "recovery" {
            if let mk = unwrap(slot: slot, kek: kek) { return mk }
        }
        if !body.slots.contains(where: { $0.type == "recovery" }) {
            throw VaultError(.wrongPassword, "this vault has no recovery key slot")
        }
        throw VaultError(.wrongPassword, "wrong recovery key", hint: "check each group; nothing was changed")
    }

    /// Opens the vault's master key with the organisation's escrow key pair.
    public func unlock(escrowSecretKey: SecureBytes) throws -> SecureBytes {
        let pk = try SealedBox.publicKey(of: escrowSecretKey)
        for slot in body.slots where slot.type == "escrow" && slot.orgPublicKey == Hex.encode(pk) {
            if let sealed = slot.sealed.flatMap(Hex.decode),
               let mk = try? SealedBox.open(sealed, publicKey: pk, secretKey: escrowSecretKey), mk.count == 32 { return mk }
        }
        throw VaultError(.wrongPassword, "no escrow slot of this vault opens with that organisation key")
    }

    /// Unwraps the master key from `slot` with `kek`; nil when the key does not fit (wrong password).
    func unwrap(slot: Slot, kek: SecureBytes) -> SecureBytes? {
        guard let nonce = slot.nonce.flatMap(Hex.decode), let ct = slot.wrappedKey.flatMap(Hex.decode) else { return nil }
        return try? AESGCMKey(kek).open(nonce: nonce, ciphertextAndTag: ct, aad: Self.aad(vaultId: body.vaultId, slot: slot))
    }

    /// Tries each password slot with `password`; returns the master key or throws `.wrongPassword`.
    public func unlock(password: SecureBytes) throws -> SecureBytes {
        try unlockPassword(password).masterKey
    }

    /// Like `unlock(password:)`, and names the slot that opened only with the bytes as typed (a
    /// slot written before passwords were normalised to NFC), which the caller should rewrap.
    public func unlockPassword(_ password: SecureBytes) throws -> (masterKey: SecureBytes, legacySlot: String?) {
        var sawPasswordSlot = false
        for slot in body.slots where slot.type == "password" {
            sawPasswordSlot = true
            if let (mk, legacy) = try unwrapPassword(slot: slot, typed: password) { return (mk, legacy ? slot.id : nil) }
        }
        if !sawPasswordSlot { throw VaultError(.wrongPassword, "this vault has no password slot") }
        throw VaultError(.wrongPassword, "wrong password", hint: "nothing was changed; try again")
    }

    /// The master key when `typed` opens password `slot`: with its NFC form, else (a slot written
    /// before normalisation) with the bytes as typed (`legacy`). Nil when it does not open.
    package func unwrapPassword(slot: Slot, typed: SecureBytes) throws -> (SecureBytes, legacy: Bool)? {
        guard slot.type == "password", let kdf = try slot.kdf?.parameters() else { return nil }
        for (i, candidate) in PasswordText.candidates(typed).enumerated() {
            let kek = try KDF.derive(password: candidate, parameters: kdf, length: 32)
            if let mk = unwrap(slot: slot, kek: kek) { return (mk, i > 0) }
        }
        return nil
    }

    // MARK: Encoding

    /// The file's bytes: body line and MAC line.
    public func serialized(macKey: SecureBytes) throws -> [UInt8] {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = Array(try enc.encode(body))
        let mac = HMACSHA256.authenticate(key: macKey, message: line)
        return line + Array("\nsha256:\(Self.checksum(line))\nhmac-sha256:\(Hex.encode(mac))\n".utf8)
    }

    static func checksum(_ line: [UInt8]) -> String {
        var h = SHA256Hasher()
        h.update(line)
        return Hex.encode(h.finalize())
    }

    /// Splits the file into its three lines.
    static func lines(_ bytes: [UInt8]) -> (body: [UInt8], sum: String, mac: String)? {
        let parts = bytes.split(separator: 10, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[3].isEmpty else { return nil }
        return (Array(parts[0]), String(decoding: parts[1], as: UTF8.self), String(decoding: parts[2], as: UTF8.self))
    }

    /// Parses the file without checking the MAC (the MAC key needs the master key); call
    /// `verify(bytes:macKey:)` once the master key is known.
    public static func parse(_ bytes: [UInt8]) throws -> KeyslotFile {
        let damaged = VaultError(.integrity, "the keyslot file is damaged or was altered",
                                 hint: "restore it from a backup (vault backup export) or use a recovery key")
        guard let (line, sum, _) = lines(bytes), constantTimeEqual(Array(sum.utf8), Array("sha256:\(checksum(line))".utf8)),
              let body = try? JSONDecoder().decode(Body.self, from: Data(line)), body.format == 1,
              Hex.decode(body.vaultId)?.count == 16 else { throw damaged }
        return KeyslotFile(body: body)
    }

    /// Checks the MAC line against the body line in constant time.
    public static func verify(bytes: [UInt8], macKey: SecureBytes) throws {
        let damaged = VaultError(.integrity, "the keyslot file is damaged or was altered (its MAC does not match)",
                                 hint: "restore it from a backup or use a recovery key")
        guard let (line, _, mac) = lines(bytes) else { throw damaged }
        let expected = "hmac-sha256:" + Hex.encode(HMACSHA256.authenticate(key: macKey, message: line))
        guard constantTimeEqual(Array(mac.utf8), Array(expected.utf8)) else { throw damaged }
    }
}
