internal import CSodium

/// Anonymous public-key encryption to an X25519 key (libsodium `crypto_box_seal`): used to escrow
/// the master key to an organisation. Only the holder of the private key can open it.
public enum SealedBox {
    public static let publicKeySize = 32
    public static let secretKeySize = 32
    public static let overhead = 48   // crypto_box_SEALBYTES

    /// A new X25519 key pair: (public, secret).
    public static func generateKeyPair() -> (publicKey: [UInt8], secretKey: SecureBytes) {
        ensureSodium()
        var pk = [UInt8](repeating: 0, count: publicKeySize)
        let sk = SecureBytes(count: secretKeySize)
        _ = sk.withUnsafeMutableBytes { crypto_box_keypair(&pk, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return (pk, sk)
    }

    /// Seals `message` to `publicKey`.
    public static func seal(_ message: SecureBytes, to publicKey: [UInt8]) throws -> [UInt8] {
        ensureSodium()
        guard publicKey.count == publicKeySize else { throw CryptoError.invalidParameter("an X25519 public key is 32 bytes") }
        var out = [UInt8](repeating: 0, count: message.count + overhead)
        let rc = message.withUnsafeBytes { m in
            crypto_box_seal(&out, m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count), publicKey)
        }
        guard rc == 0 else { throw CryptoError.internalFailure("crypto_box_seal failed") }
        return out
    }

    /// Opens a sealed box with the key pair; `authenticationFailed` if it was not sealed to it or was altered.
    public static func open(_ sealed: [UInt8], publicKey: [UInt8], secretKey: SecureBytes) throws -> SecureBytes {
        ensureSodium()
        guard sealed.count >= overhead, publicKey.count == publicKeySize, secretKey.count == secretKeySize else {
            throw CryptoError.invalidParameter("malformed sealed box or key")
        }
        let out = SecureBytes(count: sealed.count - overhead)
        let rc = out.withUnsafeMutableBytes { o in
            secretKey.withUnsafeBytes { sk in
                crypto_box_seal_open(o.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed, UInt64(sealed.count),
                                     publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard rc == 0 else { throw CryptoError.authenticationFailed("the sealed box does not open with this key") }
        return out
    }

    /// The public key of an X25519 secret key.
    public static func publicKey(of secretKey: SecureBytes) throws -> [UInt8] {
        ensureSodium()
        var pk = [UInt8](repeating: 0, count: publicKeySize)
        let rc = secretKey.withUnsafeBytes { crypto_scalarmult_base(&pk, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        guard rc == 0 else { throw CryptoError.invalidParameter("not an X25519 secret key") }
        return pk
    }
}

/// Ed25519 signatures (libsodium `crypto_sign_detached`): the organisation signs its policy.
public enum Ed25519 {
    public static let publicKeySize = 32
    public static let signatureSize = 64

    /// A new key pair: (public 32 bytes, secret 64 bytes).
    public static func generateKeyPair() -> (publicKey: [UInt8], secretKey: SecureBytes) {
        ensureSodium()
        var pk = [UInt8](repeating: 0, count: publicKeySize)
        let sk = SecureBytes(count: 64)
        _ = sk.withUnsafeMutableBytes { crypto_sign_keypair(&pk, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return (pk, sk)
    }

    public static func sign(_ message: [UInt8], secretKey: SecureBytes) throws -> [UInt8] {
        ensureSodium()
        guard secretKey.count == 64 else { throw CryptoError.invalidParameter("an Ed25519 secret key is 64 bytes") }
        var sig = [UInt8](repeating: 0, count: signatureSize)
        _ = secretKey.withUnsafeBytes { crypto_sign_detached(&sig, nil, message, UInt64(message.count), $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return sig
    }

    /// True only for a valid signature of `message` by `publicKey`.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        ensureSodium()
        guard signature.count == signatureSize, publicKey.count == publicKeySize else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}
