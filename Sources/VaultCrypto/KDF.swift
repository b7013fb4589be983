internal import COpenSSL
internal import CSodium
import VaultPrimitives

/// Stored password-KDF parameters.
///
/// Encoded as a flat object with an `algorithm` tag and the salt in lowercase hex, e.g.
/// `{"algorithm":"argon2id","opsLimit":3,"memLimitBytes":67108864,"salt":"00…"}` or
/// `{"algorithm":"pbkdf2-sha512","iterations":210000,"salt":"00…"}`. Decoding checks the salt length.
public enum KDFParameters: Codable, Equatable, Sendable {
    /// libsodium `crypto_pwhash` with `crypto_pwhash_ALG_ARGON2ID13` (1 lane); salt is 16 bytes.
    case argon2id(opsLimit: UInt64, memLimitBytes: UInt64, salt: [UInt8])
    /// PBKDF2-HMAC-SHA-512 (OpenSSL); salt is at least 16 bytes.
    case pbkdf2SHA512(iterations: UInt32, salt: [UInt8])

    public var algorithmName: String {
        switch self {
        case .argon2id: "argon2id"
        case .pbkdf2SHA512: "pbkdf2-sha512"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case algorithm, opsLimit, memLimitBytes, iterations, salt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let algorithm = try container.decode(String.self, forKey: .algorithm)
        let saltHex = try container.decode(String.self, forKey: .salt)
        guard let salt = Hex.decode(saltHex) else {
            throw DecodingError.dataCorruptedError(forKey: .salt, in: container, debugDescription: "salt is not hex")
        }
        switch algorithm {
        case "argon2id":
            guard salt.count == KDF.argon2idSaltSize else {
                throw DecodingError.dataCorruptedError(forKey: .salt, in: container, debugDescription: "argon2id salt must be 16 bytes")
            }
            self = .argon2id(opsLimit: try container.decode(UInt64.self, forKey: .opsLimit),
                             memLimitBytes: try container.decode(UInt64.self, forKey: .memLimitBytes),
                             salt: salt)
        case "pbkdf2-sha512":
            guard salt.count >= KDF.pbkdf2MinimumSaltSize else {
                throw DecodingError.dataCorruptedError(forKey: .salt, in: container, debugDescription: "pbkdf2 salt must be at least 16 bytes")
            }
            self = .pbkdf2SHA512(iterations: try container.decode(UInt32.self, forKey: .iterations), salt: salt)
        default:
            throw DecodingError.dataCorruptedError(forKey: .algorithm, in: container, debugDescription: "unknown KDF algorithm \(algorithm)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(algorithmName, forKey: .algorithm)
        switch self {
        case let .argon2id(opsLimit, memLimitBytes, salt):
            try container.encode(opsLimit, forKey: .opsLimit)
            try container.encode(memLimitBytes, forKey: .memLimitBytes)
            try container.encode(Hex.encode(salt), forKey: .salt)
        case let .pbkdf2SHA512(iterations, salt):
            try container.encode(iterations, forKey: .iterations)
            try container.encode(Hex.encode(salt), forKey: .salt)
        }
    }
}

extension KDFParameters {
    /// The Argon2id pass counts a stored parameter set (a keyslot, a backup bundle) may name.
    /// Readers refuse anything outside these ranges before any work (a tampered file must not
    /// exhaust memory or time), so writers must never store it (SECURITY.md "Key hierarchy").
    public static let argon2idOpsRange: ClosedRange<UInt64> = 1...64
    /// The Argon2id memory sizes (bytes) a stored parameter set may name: 8 KiB to 4 GiB.
    public static let argon2idMemoryRange: ClosedRange<UInt64> = 8192...(4 << 30)
    /// The PBKDF2 iteration counts a stored parameter set may name.
    public static let pbkdf2IterationsRange: ClosedRange<UInt32> = 1000...100_000_000

    /// Why these parameters may not be stored (a reader would refuse them), or nil when they may.
    public var storageProblem: String? {
        switch self {
        case let .argon2id(ops, mem, salt):
            if !Self.argon2idOpsRange.contains(ops) {
                return "Argon2id with \(ops) passes is outside \(Self.argon2idOpsRange.lowerBound)–\(Self.argon2idOpsRange.upperBound)"
            }
            if !Self.argon2idMemoryRange.contains(mem) {
                return "Argon2id with \(mem) bytes of memory is outside 8 KiB–4 GiB"
            }
            if salt.count != KDF.argon2idSaltSize { return "an Argon2id salt must be \(KDF.argon2idSaltSize) bytes" }
        case let .pbkdf2SHA512(iterations, salt):
            if !Self.pbkdf2IterationsRange.contains(iterations) {
                return "PBKDF2 with \(iterations) iterations is outside \(Self.pbkdf2IterationsRange.lowerBound)–\(Self.pbkdf2IterationsRange.upperBound)"
            }
            if salt.count < KDF.pbkdf2MinimumSaltSize { return "a PBKDF2 salt must be at least \(KDF.pbkdf2MinimumSaltSize) bytes" }
        }
        return nil
    }
}

/// Password-based key derivation.
public enum KDF {
    static let argon2idSaltSize = Int(crypto_pwhash_SALTBYTES)
    static let pbkdf2MinimumSaltSize = 16

    /// Derives `length` key bytes from `password` with stored `parameters` (which are checked:
    /// argon2id salt 16 bytes, PBKDF2 salt ≥ 16 bytes and iterations ≥ 1).
    public static func derive(password: SecureBytes, parameters: KDFParameters, length: Int = 32) throws -> SecureBytes {
        switch parameters {
        case let .argon2id(opsLimit, memLimitBytes, salt):
            return try argon2id(password: password, salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes, length: length)
        case let .pbkdf2SHA512(iterations, salt):
            guard salt.count >= pbkdf2MinimumSaltSize else {
                throw CryptoError.invalidParameter("PBKDF2 salt must be at least \(pbkdf2MinimumSaltSize) bytes, got \(salt.count)")
            }
            return try pbkdf2(password: password, salt: salt, iterations: iterations, hash: .sha512, length: length)
        }
    }

    /// Argon2id v1.3 through libsodium `crypto_pwhash(…, crypto_pwhash_ALG_ARGON2ID13)` (one lane).
    /// `salt` must be 16 bytes; `length`, `opsLimit` and `memLimitBytes` must lie within libsodium's
    /// bounds (`length` ≥ 16, `opsLimit` ≥ 1, `memLimitBytes` ≥ 8 KiB).
    public static func argon2id(password: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimitBytes: UInt64, length: Int) throws -> SecureBytes {
        ensureSodium()
        guard salt.count == argon2idSaltSize else {
            throw CryptoError.invalidParameter("argon2id salt must be \(argon2idSaltSize) bytes, got \(salt.count)")
        }
        guard length >= 0, UInt64(length) >= UInt64(crypto_pwhash_argon2id_bytes_min()),
              UInt64(length) <= UInt64(crypto_pwhash_argon2id_bytes_max()) else {
            throw CryptoError.invalidParameter("argon2id output length \(length) is below the minimum \(crypto_pwhash_argon2id_bytes_min()) or too large")
        }
        guard opsLimit >= UInt64(crypto_pwhash_argon2id_opslimit_min()), opsLimit <= UInt64(crypto_pwhash_argon2id_opslimit_max()) else {
            throw CryptoError.invalidParameter("argon2id opsLimit \(opsLimit) is out of range")
        }
        guard memLimitBytes >= UInt64(crypto_pwhash_argon2id_memlimit_min()), memLimitBytes <= UInt64(crypto_pwhash_argon2id_memlimit_max()) else {
            throw CryptoError.invalidParameter("argon2id memLimitBytes \(memLimitBytes) is out of range")
        }
        guard UInt64(password.count) <= UInt64(crypto_pwhash_argon2id_passwd_max()) else {
            throw CryptoError.invalidParameter("password too long")
        }
        let output = SecureBytes(count: length)
        let status = output.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { passwordBytes in
                salt.withUnsafeBufferPointer { saltBytes in
                    crypto_pwhash(out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(length),
                                  passwordBytes.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(password.count),
                                  saltBytes.baseAddress!, opsLimit, Int(memLimitBytes), crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard status == 0 else {
            throw CryptoError.internalFailure("crypto_pwhash (argon2id) failed; out of memory for \(memLimitBytes) bytes?")
        }
        return output
    }

    public enum PBKDF2Hash: Sendable { case sha256, sha512 }

    /// PBKDF2-HMAC (RFC 8018) through OpenSSL `PKCS5_PBKDF2_HMAC`. No policy on salt size here
    /// (the vectors use 4-byte salts); `derive` enforces ≥ 16 for stored parameters.
    public static func pbkdf2(password: SecureBytes, salt: [UInt8], iterations: UInt32, hash: PBKDF2Hash, length: Int) throws -> SecureBytes {
        guard iterations >= 1, iterations <= UInt32(Int32.max) else {
            throw CryptoError.invalidParameter("PBKDF2 iteration count \(iterations) is outside 1...\(Int32.max)")
        }
        guard length >= 1, length <= Int(Int32.max) else {
            throw CryptoError.invalidParameter("PBKDF2 output length \(length) is out of range")
        }
        guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else {
            throw CryptoError.invalidParameter("PBKDF2 password or salt too long")
        }
        let digest = switch hash {
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
        let output = SecureBytes(count: length)
        let status = output.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { passwordBytes in
                salt.withUnsafeBufferPointer { saltBytes in
                    PKCS5_PBKDF2_HMAC(passwordBytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(password.count),
                                      saltBytes.baseAddress, Int32(salt.count), Int32(iterations), digest,
                                      Int32(length), out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 1 else { throw openSSLFailure("PKCS5_PBKDF2_HMAC") }
        return output
    }

    /// Fresh parameters (random salt) whose derivation takes about `targetSeconds` here; never below
    /// the floors given, and never above `KDFParameters.argon2idOpsRange` (a slot a reader would
    /// refuse); a floor above that range is kept, for the caller's `storageProblem` check to refuse.
    /// Measures one derivation at `minOpsLimit` and scales the pass count linearly.
    public static func calibrateArgon2id(targetSeconds: Double, memLimitBytes: UInt64 = 64 << 20, minOpsLimit: UInt64 = 2) -> KDFParameters {
        let salt = SecureRandom.bytes(argon2idSaltSize)
        let floorOps = Swift.max(minOpsLimit, UInt64(crypto_pwhash_argon2id_opslimit_min()))
        let memory = Swift.max(memLimitBytes, UInt64(crypto_pwhash_argon2id_memlimit_min()))
        let probePassword = SecureBytes.random(count: 16)
        var probeSucceeded = false
        let elapsed = seconds {
            probeSucceeded = (try? argon2id(password: probePassword, salt: salt, opsLimit: floorOps, memLimitBytes: memory, length: 32)) != nil
        }
        let perPass = elapsed / Double(floorOps)
        var ops = floorOps
        // A failed probe (e.g. out of memory) measures nothing: keep the floor.
        if probeSucceeded, perPass > 0, targetSeconds.isFinite, targetSeconds > 0 {
            let scaled = (targetSeconds / perPass).rounded(.down)
            let ceiling = Double(KDFParameters.argon2idOpsRange.upperBound)
            ops = Swift.max(floorOps, UInt64(Swift.min(scaled, ceiling)))
        }
        return .argon2id(opsLimit: ops, memLimitBytes: memory, salt: SecureRandom.bytes(argon2idSaltSize))
    }

    /// Fresh PBKDF2-HMAC-SHA-512 parameters (random 16-byte salt) whose derivation takes about
    /// `targetSeconds` here; never fewer than `minIterations` (OWASP 2023: 210 000 for SHA-512), and
    /// never more than `KDFParameters.pbkdf2IterationsRange` allows (unless the floor is above it).
    public static func calibratePBKDF2(targetSeconds: Double, minIterations: UInt32 = 210_000) -> KDFParameters {
        let salt = SecureRandom.bytes(pbkdf2MinimumSaltSize)
        let probePassword = SecureBytes.random(count: 16)
        // Grow the probe until it runs for at least 50 ms, so the rate is not timer noise.
        var probeIterations: UInt32 = 10_000
        var rate = 0.0
        while true {
            var probeSucceeded = false
            let elapsed = seconds {
                probeSucceeded = (try? pbkdf2(password: probePassword, salt: salt, iterations: probeIterations, hash: .sha512, length: 32)) != nil
            }
            guard probeSucceeded else { break }
            if elapsed >= 0.05 || probeIterations >= 10_000_000 {
                rate = Double(probeIterations) / Swift.max(elapsed, 1e-9)
                break
            }
            probeIterations *= 4
        }
        var iterations = minIterations
        if targetSeconds.isFinite, targetSeconds > 0 {
            let scaled = Swift.min((rate * targetSeconds).rounded(.down), Double(KDFParameters.pbkdf2IterationsRange.upperBound))
            iterations = Swift.max(minIterations, UInt32(scaled))
        }
        return .pbkdf2SHA512(iterations: Swift.max(iterations, 1), salt: SecureRandom.bytes(pbkdf2MinimumSaltSize))
    }

    private static func seconds(_ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        let duration = clock.measure(body)
        let (whole, fraction) = duration.components
        return Double(whole) + Double(fraction) * 1e-18
    }
}
