/// AES-256-GCM with a 12-byte nonce and a 16-byte tag appended (output = ciphertext || tag).
///
/// The key schedule is computed once in `init` and reused for every message. Safe to share across
/// threads (the OpenSSL backend serialises use of its contexts). Nonce uniqueness per key is the
/// caller's job; the sealed blob format gets it from a fresh data key per blob and a segment counter.
public final class AESGCMKey: @unchecked Sendable {
    public static let keySize = 32
    public static let nonceSize = 12
    public static let tagSize = 16

    /// The implementations behind `AESGCMKey`.
    enum Backend: Sendable, CaseIterable {
        /// OpenSSL EVP (`EVP_aes_256_gcm`), one reusable EVP_CIPHER_CTX per key and direction.
        case opensslEVP
        /// libsodium `crypto_aead_aes256gcm_*_afternm`; needs AES-NI + PCLMUL.
        case libsodiumAESNI

        var name: String {
            switch self {
            case .opensslEVP: "openssl-evp"
            case .libsodiumAESNI: "libsodium-aesni"
            }
        }

        var isAvailable: Bool {
            switch self {
            case .opensslEVP: true
            case .libsodiumAESNI: SodiumAESGCM.isAvailable
            }
        }

        /// Measured on the build machine (AMD EPYC, AES-NI + VAES, 64 KiB messages): OpenSSL EVP
        /// seals at roughly twice libsodium 1.0.18's speed, so it is used for everything.
        static let preferred: Backend = .opensslEVP
    }

    /// The backend every `AESGCMKey(_:)` uses.
    public static var backendName: String { Backend.preferred.name }

    let backend: Backend
    private let engine: any AESGCMEngine

    /// `key` must be 32 bytes.
    public convenience init(_ key: SecureBytes) throws {
        try self.init(key, backend: Backend.preferred)
    }

    /// An engine of the caller's (tests: one that fails part-way).
    init(engine: any AESGCMEngine) {
        backend = Backend.preferred
        self.engine = engine
    }

    /// Forces a backend (tests compare both against the vectors).
    init(_ key: SecureBytes, backend: Backend) throws {
        guard key.count == Self.keySize else {
            throw CryptoError.invalidParameter("AES-256-GCM key must be \(Self.keySize) bytes, got \(key.count)")
        }
        self.backend = backend
        switch backend {
        case .opensslEVP:
            engine = try key.withUnsafeBytes { try OpenSSLAESGCM(key: $0) }
        case .libsodiumAESNI:
            guard SodiumAESGCM.isAvailable else {
                throw CryptoError.unavailable("libsodium AES-256-GCM needs AES-NI and PCLMUL, which this CPU lacks")
            }
            engine = key.withUnsafeBytes { SodiumAESGCM(key: $0) }
        }
    }

    // MARK: Buffer API

    /// Encrypts `plaintext` into `output` (at least `plaintext.count + 16` bytes); returns the bytes
    /// written (`plaintext.count + 16`).
    public func seal(nonce: [UInt8], plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        guard nonce.count == Self.nonceSize else { throw Self.badNonce(nonce.count) }
        return try nonce.withUnsafeBytes { try seal(nonce: $0, plaintext: plaintext, aad: aad, into: output) }
    }

    /// Decrypts and authenticates `ciphertextAndTag` into `output` (at least `count − 16` bytes);
    /// returns the plaintext length. On failure throws `authenticationFailed` and leaves the
    /// plaintext region of `output` zeroed: unauthenticated plaintext is never left behind.
    public func open(nonce: [UInt8], ciphertextAndTag: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        guard nonce.count == Self.nonceSize else { throw Self.badNonce(nonce.count) }
        return try nonce.withUnsafeBytes { try open(nonce: $0, ciphertextAndTag: ciphertextAndTag, aad: aad, into: output) }
    }

    // MARK: Array API

    public func seal(nonce: [UInt8], plaintext: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: plaintext.count + Self.tagSize)
        _ = try plaintext.withUnsafeBytes { pt in
            try aad.withUnsafeBytes { ad in
                try output.withUnsafeMutableBytes { out in
                    try seal(nonce: nonce, plaintext: pt, aad: ad, into: out)
                }
            }
        }
        return output
    }

    /// Seals key material straight from its locked memory, so no unwiped copy of it is made
    /// (`seal(nonce:plaintext:aad:)` of `Array(key)` would leave one on the heap).
    public func seal(nonce: [UInt8], secret: SecureBytes, aad: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: secret.count + Self.tagSize)
        _ = try secret.withUnsafeBytes { pt in
            try aad.withUnsafeBytes { ad in
                try output.withUnsafeMutableBytes { out in try seal(nonce: nonce, plaintext: pt, aad: ad, into: out) }
            }
        }
        return output
    }

    /// The plaintext comes back as `SecureBytes` because it is often key material (wrapped keys).
    public func open(nonce: [UInt8], ciphertextAndTag: [UInt8], aad: [UInt8]) throws -> SecureBytes {
        guard ciphertextAndTag.count >= Self.tagSize else { throw Self.tooShort(ciphertextAndTag.count) }
        let plaintext = SecureBytes(count: ciphertextAndTag.count - Self.tagSize)
        _ = try ciphertextAndTag.withUnsafeBytes { ct in
            try aad.withUnsafeBytes { ad in
                try plaintext.withUnsafeMutableBytes { out in
                    try open(nonce: nonce, ciphertextAndTag: ct, aad: ad, into: out)
                }
            }
        }
        return plaintext
    }

    // MARK: Allocation-free core (the sealed blob format uses these with reused buffers)

    func seal(nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        guard nonce.count == Self.nonceSize else { throw Self.badNonce(nonce.count) }
        let total = plaintext.count + Self.tagSize
        guard output.count >= total else {
            throw CryptoError.invalidParameter("AES-GCM output buffer holds \(output.count) bytes, needs \(total)")
        }
        guard plaintext.count <= Self.maximumMessageSize, aad.count <= Self.maximumMessageSize else {
            throw CryptoError.invalidParameter("AES-GCM message or AAD larger than \(Self.maximumMessageSize) bytes")
        }
        try engine.seal(nonce: nonce.baseAddress!, plaintext: plaintext, aad: aad, output: output.baseAddress!)
        return total
    }

    func open(nonce: UnsafeRawBufferPointer, ciphertextAndTag: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        guard nonce.count == Self.nonceSize else { throw Self.badNonce(nonce.count) }
        guard ciphertextAndTag.count >= Self.tagSize else { throw Self.tooShort(ciphertextAndTag.count) }
        let plaintextCount = ciphertextAndTag.count - Self.tagSize
        guard output.count >= plaintextCount else {
            throw CryptoError.invalidParameter("AES-GCM output buffer holds \(output.count) bytes, needs \(plaintextCount)")
        }
        guard plaintextCount <= Self.maximumMessageSize, aad.count <= Self.maximumMessageSize else {
            throw CryptoError.invalidParameter("AES-GCM message or AAD larger than \(Self.maximumMessageSize) bytes")
        }
        let ciphertext = UnsafeRawBufferPointer(rebasing: ciphertextAndTag[..<plaintextCount])
        let tag = ciphertextAndTag.baseAddress! + plaintextCount
        // An empty output buffer may have no base address; any non-nil pointer will do for 0 bytes.
        let destination = output.baseAddress ?? UnsafeMutableRawPointer(mutating: tag)
        // Whatever the engine wrote before it failed (an error after the decryption step, or a tag
        // that does not match) is unverified plaintext: it is zeroed on every way out but success.
        let authentic: Bool
        do {
            authentic = try engine.open(nonce: nonce.baseAddress!, ciphertext: ciphertext, tag: tag, aad: aad, output: destination)
        } catch {
            if plaintextCount > 0 { destination.initializeMemory(as: UInt8.self, repeating: 0, count: plaintextCount) }
            throw error
        }
        guard authentic else {
            if plaintextCount > 0 { destination.initializeMemory(as: UInt8.self, repeating: 0, count: plaintextCount) }
            throw CryptoError.authenticationFailed("AES-GCM tag does not match (wrong key or modified data)")
        }
        return plaintextCount
    }

    /// Both C APIs take `int`-sized lengths somewhere; GCM itself stops at 2^36 − 32 bytes.
    static let maximumMessageSize = Int(Int32.max) - 64

    private static func badNonce(_ count: Int) -> CryptoError {
        .invalidParameter("AES-GCM nonce must be \(nonceSize) bytes, got \(count)")
    }

    private static func tooShort(_ count: Int) -> CryptoError {
        .authenticationFailed("AES-GCM input of \(count) bytes is shorter than the \(tagSize)-byte tag")
    }
}

/// One AES-256-GCM implementation with a precomputed key. `nonce` points at 12 bytes; `output`
/// holds plaintext.count + 16 (seal) or ciphertext.count (open) bytes.
protocol AESGCMEngine: AnyObject, Sendable {
    func seal(nonce: UnsafeRawPointer, plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws
    /// False when the tag does not verify. On false or a throw `output` may hold unverified
    /// plaintext: the caller wipes it.
    func open(nonce: UnsafeRawPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws -> Bool
}
