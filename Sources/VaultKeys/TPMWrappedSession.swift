import VaultCrypto
import VaultPrimitives
import VaultTPM

/// The keyring item's secret when no agent runs and this machine's TPM holds one of the vault's
/// tpm2 slots (format `v3`, SECURITY.md "The keyring session"): the deadlines of `v1`, the
/// TPM-sealed session key, and the master key sealed under it.
///
/// Text (ASCII): `v3:<epoch>:<unlockedAt>:<lastUsedAt>:<idleSeconds>:<absoluteSeconds>:<public>:<private>:<nonce>:<sealed>`,
/// numbers in decimal; `public` and `private` the sealed object's TPM2B areas in lowercase hex,
/// `nonce` 24 hex (new at every write) and `sealed` 96 hex =
/// `AES-256-GCM(sessionKey, nonce, masterKey, AAD = "vault-tpm-session-v3|<vaultId>|<copyId>|<epoch>|<unlockedAt>|<lastUsedAt>|<idleSeconds>|<absoluteSeconds>|<public>|<private>")`.
struct TPMWrappedSession {
    let epoch: UInt32
    let unlockedAt: Int64, lastUsedAt: Int64, idleTimeout: Int64, absoluteTimeout: Int64
    let publicArea: [UInt8], privateArea: [UInt8]
    let nonce: [UInt8], sealed: [UInt8]

    /// Why a `v3` item did not open.
    enum Failure: Error {
        /// This TPM cannot be used now (absent, not permitted, not answering): the item is kept.
        case unavailable(String)
        /// The item does not open under this TPM (altered, or another machine's).
        case doesNotOpen(String)
    }

    static func aad(vaultId: String, copyId: String, epoch: UInt32, unlockedAt: Int64, lastUsedAt: Int64,
                    idle: Int64, absolute: Int64, publicHex: String, privateHex: String) -> [UInt8] {
        Array("vault-tpm-session-v3|\(vaultId)|\(copyId)|\(epoch)|\(unlockedAt)|\(lastUsedAt)|\(idle)|\(absolute)|\(publicHex)|\(privateHex)".utf8)
    }

    /// The item text for `r`, its master key sealed under `hardware` with a fresh nonce.
    static func wrap(_ r: KeyringSession.Record, _ hardware: TPMSessionKey, vaultId: String, copyId: String) throws -> String {
        let pub = Hex.encode(hardware.sealed.publicArea), priv = Hex.encode(hardware.sealed.privateArea)
        let aad = Self.aad(vaultId: vaultId, copyId: copyId, epoch: r.epoch, unlockedAt: r.unlockedAt, lastUsedAt: r.lastUsedAt,
                           idle: r.idleTimeout, absolute: r.absoluteTimeout, publicHex: pub, privateHex: priv)
        let nonce = SecureRandom.bytes(AESGCMKey.nonceSize)
        var sealed = [UInt8](repeating: 0, count: r.masterKey.count + AESGCMKey.tagSize)
        let key = try AESGCMKey(hardware.key)
        _ = try r.masterKey.withUnsafeBytes { mk in
            try aad.withUnsafeBytes { ad in
                try sealed.withUnsafeMutableBytes { out in try key.seal(nonce: nonce, plaintext: mk, aad: ad, into: out) }
            }
        }
        return "v3:\(r.epoch):\(r.unlockedAt):\(r.lastUsedAt):\(r.idleTimeout):\(r.absoluteTimeout):\(pub):\(priv):\(Hex.encode(nonce)):\(Hex.encode(sealed))"
    }

    /// Parses the item text; nil unless it is exactly the `v3` form.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> TPMWrappedSession? {
        let f = String(decoding: bytes, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard f.count == 10, f[0] == "v3", let epoch = UInt32(f[1]),
              let ua = Int64(f[2]), let lu = Int64(f[3]), let idle = Int64(f[4]), let abs = Int64(f[5]),
              let pub = Hex.decode(f[6]), !pub.isEmpty, let priv = Hex.decode(f[7]), !priv.isEmpty,
              Hex.encode(pub) == f[6], Hex.encode(priv) == f[7],
              let nonce = Hex.decode(f[8]), nonce.count == AESGCMKey.nonceSize,
              let sealed = Hex.decode(f[9]), sealed.count == 32 + AESGCMKey.tagSize else { return nil }
        return TPMWrappedSession(epoch: epoch, unlockedAt: ua, lastUsedAt: lu, idleTimeout: idle, absoluteTimeout: abs,
                                 publicArea: pub, privateArea: priv, nonce: nonce, sealed: sealed)
    }

    /// Unseals the session key in the TPM of `tcti` and opens the master key with it.
    func open(tcti: String?, vaultId: String, copyId: String) -> Result<KeyringSession.Record, Failure> {
        let object = TPMSealedObject(publicArea: publicArea, privateArea: privateArea, pcrs: .none)
        let hardware: TPMSessionKey
        do { hardware = try TPMSessionKey.unseal(object, tcti: tcti) } catch {
            if TPMSessionKey.isUnavailable(error) {
                return .failure(.unavailable("its session is held under this machine's TPM, which cannot be used now: \(error)"))
            }
            return .failure(.doesNotOpen("its keyring item does not open under this machine's TPM (altered, or taken from another machine): \(error)"))
        }
        let aad = Self.aad(vaultId: vaultId, copyId: copyId, epoch: epoch, unlockedAt: unlockedAt, lastUsedAt: lastUsedAt,
                           idle: idleTimeout, absolute: absoluteTimeout, publicHex: Hex.encode(publicArea), privateHex: Hex.encode(privateArea))
        guard let key = try? AESGCMKey(hardware.key), let master = try? key.open(nonce: nonce, ciphertextAndTag: sealed, aad: aad) else {
            return .failure(.doesNotOpen("its keyring item was altered (its sealed key does not open)"))
        }
        return .success(KeyringSession.Record(masterKey: master, epoch: epoch, unlockedAt: unlockedAt, lastUsedAt: lastUsedAt,
                                              idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout, hardware: hardware))
    }
}
