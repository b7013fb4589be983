import Foundation
import VaultCrypto
import VaultFIDO2
import VaultPrimitives

/// Where the FIDO2 security key is: a hidraw path (`--device`, `VAULT_FIDO2_DEVICE`), the first
/// one the system lists, or, in debug builds only, the test authenticator's socket.
public struct FIDO2Source: Sendable {
    public var device: String?
    /// `VAULT_TEST_FIDO2_SOCKET`: honoured only by debug builds (tests), and only when the socket
    /// is this user's and no one else may write to it (SECURITY.md, threat-model/).
    public var testSocket: String?

    /// The source `environment` names, `device` first.
    public init(device: String? = nil, environment: [String: String]) {
        self.device = device ?? environment["VAULT_FIDO2_DEVICE"].flatMap { $0.isEmpty ? nil : $0 }
        #if DEBUG
        testSocket = environment["VAULT_TEST_FIDO2_SOCKET"].flatMap { Self.ownSocket($0) ? $0 : nil }
        #else
        testSocket = nil
        #endif
    }

    /// Whether `path` is a socket owned by this user, neither group- nor world-writable.
    static func ownSocket(_ path: String) -> Bool {
        var st = stat()
        guard !path.isEmpty, lstat(path, &st) == 0 else { return false }
        return (st.st_mode & S_IFMT) == S_IFSOCK && st.st_uid == getuid() && st.st_mode & 0o022 == 0
    }

    /// Opens the security key (or the test authenticator).
    public func open() throws(FIDO2Error) -> FIDO2Authenticator {
        try FIDO2Authenticator(device: device, testSocket: testSocket)
    }
}

extension FIDO2Error {
    /// The error to report for this FIDO2 failure, with what to do next.
    public var vaultError: VaultError {
        switch self {
        case .noDevice: return VaultError(.notFound, description, hint: "plug in the security key, or use the password")
        case .wrongPIN, .pinBlocked: return VaultError(.wrongPassword, description, hint: "unlock with the password")
        case .pinRequired, .pinNotSet: return VaultError(.usage, description, hint: "pass the key's PIN with --pin-file, or set one with the key's tool")
        case .notTouched: return VaultError(.locked, description, hint: "run the command again and touch the key when asked, or use the password")
        case .otherAuthenticator, .malformed: return VaultError(.integrity, description, hint: "use the security key that enrolled the slot, or the password")
        case .unsupported: return VaultError(.usage, description, hint: "use a FIDO2 key with hmac-secret, or the password")
        case .unreachable, .failed: return VaultError(.io, description, hint: "plug the key in again, or use the password")
        }
    }

    /// Runs one FIDO2 call, its failure as a `VaultError`.
    static func mapped<R>(_ body: () throws(FIDO2Error) -> R) throws(VaultError) -> R {
        do { return try body() } catch { throw error.vaultError }
    }
}

extension Vault {
    /// Makes a credential with hmac-secret on the security key of `source` (a touch; its PIN,
    /// read from `pin`, when it has one), asks its output for a fresh salt (a second touch) and
    /// adds a fido2 slot wrapping the master key under the KEK of that output. `touch` is told
    /// before each touch. The envelope is unchanged (the slot stays on this device). Returns the
    /// slot id and whether it was enrolled with the key's PIN. With `requirePIN` (the policy's
    /// `hardwareKeyPin`) a key without a PIN is refused before any touch.
    public func addFIDO2Slot(source: FIDO2Source, pin: PasswordSource, requirePIN: Bool = false,
                             touch: (String) -> Void) throws -> (id: String, pin: Bool) {
        let key = try FIDO2Error.mapped { () throws(FIDO2Error) in try source.open() }
        defer { key.close() }
        let info = try FIDO2Error.mapped { () throws(FIDO2Error) in try key.info() }
        if requirePIN && info.pin != .set {
            throw VaultError(.policy, "the policy requires a PIN on hardware slots (hardwareKeyPin) and this security key has none; nothing was changed",
                             hint: "set a PIN on the key with its own tool (e.g. `fido2-token -S`), then enroll again")
        }
        let typed = info.pin == .set ? PasswordText.normalized(try pin.read("FIDO2 PIN of the security key: ")) : nil
        let rp = KeyslotFile.fido2RelyingParty
        let userId = keys.vaultId
        touch("Touch the security key to make the credential…")
        let credential = try FIDO2Error.mapped { () throws(FIDO2Error) in try key.makeCredential(rp: rp, userId: userId, pin: typed) }
        let salt = SecureRandom.bytes(32)
        touch("Touch the security key again to derive the slot key…")
        let secret = try FIDO2Error.mapped { () throws(FIDO2Error) in
            try key.hmacSecret(rp: rp, credentialId: credential, salt: salt, pin: typed)
        }
        var file = keyslots
        let record = KeyslotFile.FIDO2Record(rp: rp, credentialId: credential, salt: salt, pin: typed != nil)
        let id = nextSlotId(KeyslotFile.fido2Type, in: file.body.slots)
        file.body.slots.append(try KeyslotFile.fido2Slot(id: id, record: record, secret: secret, masterKey: masterKey, vaultId: vaultId))
        try saveKeyslots(file, macKey: keys.keyslotMacKey, bumpGeneration: false)
        return (id, typed != nil)
    }
}

/// How `vault key rotate` reaches the security key to re-wrap the fido2 slots for the new key.
public struct FIDO2Rewrap {
    public var source: FIDO2Source
    public var pin: PasswordSource
    public var touch: (String) -> Void

    public init(source: FIDO2Source, pin: PasswordSource, touch: @escaping (String) -> Void) {
        self.source = source; self.pin = pin; self.touch = touch
    }
}

extension Vault {
    /// The fido2 slots of `file` that the plugged-in key holds, wrapping `newMaster`: one touch
    /// per slot answers both the slot's salt (its old wrap is checked) and a fresh one (the new
    /// KEK). The ids of the others, and why, are returned as dropped.
    func rewrappedFIDO2Slots(_ rewrap: FIDO2Rewrap, newMaster: SecureBytes) -> (slots: [KeyslotFile.Slot], note: String?) {
        let slots = keyslots.fido2Slots
        guard !slots.isEmpty else { return ([], nil) }
        do {
            let key = try FIDO2Error.mapped { () throws(FIDO2Error) in try rewrap.source.open() }
            defer { key.close() }
            var out: [KeyslotFile.Slot] = []
            var notes: [String] = []
            var pin: SecureBytes?
            for slot in slots {
                do {
                    guard let record = slot.fido2 else { continue }
                    let (credential, salt) = try record.decoded()
                    if record.pin && pin == nil { pin = PasswordText.normalized(try rewrap.pin.read("FIDO2 PIN of the security key: ")) }
                    let fresh = SecureRandom.bytes(32)
                    rewrap.touch("Touch the security key to re-wrap keyslot \(slot.id)…")
                    let both = try FIDO2Error.mapped { () throws(FIDO2Error) in
                        try key.hmacSecret(rp: record.rp, credentialId: credential, salt: salt + fresh, pin: record.pin ? pin : nil)
                    }
                    let (old, new) = both.withUnsafeBytes { b in
                        (SecureBytes(copying: UnsafeRawBufferPointer(rebasing: b[0..<32])), SecureBytes(copying: UnsafeRawBufferPointer(rebasing: b[32..<64])))
                    }
                    _ = try keyslots.unlock(fido2Slot: slot, secret: old)
                    let next = KeyslotFile.FIDO2Record(rp: record.rp, credentialId: credential, salt: fresh, pin: record.pin)
                    out.append(try KeyslotFile.fido2Slot(id: slot.id, record: next, secret: new, masterKey: newMaster, vaultId: vaultId))
                } catch {
                    notes.append("\(slot.id): \(VaultError.wrap(error).message)")
                }
            }
            return (out, notes.isEmpty ? nil : notes.joined(separator: "; "))
        } catch {
            return ([], VaultError.wrap(error).message)
        }
    }
}
