internal import CSodium

/// HMAC-SHA-256 (libsodium `crypto_auth_hmacsha256_*`, which takes a key of any length).
public enum HMACSHA256 {
    public static func authenticate(key: SecureBytes, message: some Collection<UInt8>) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: HMAC.sha256.outputSize)
        key.withUnsafeBytes { keyBytes in
            let run: (UnsafeRawBufferPointer) -> Void = { messageBytes in
                mac.withUnsafeMutableBytes { out in
                    HMAC.sha256.authenticate(key: keyBytes, parts: [messageBytes], into: out.baseAddress!)
                }
            }
            if message.withContiguousStorageIfAvailable({ run(UnsafeRawBufferPointer($0)) }) == nil {
                Array(message).withUnsafeBytes(run)
            }
        }
        return mac
    }
}

/// HMAC over libsodium's incremental SHA-256 / SHA-512 HMAC states. The state holds key-derived
/// pads, so it is wiped after every use.
enum HMAC {
    case sha256, sha512

    var outputSize: Int {
        switch self {
        case .sha256: Int(crypto_auth_hmacsha256_BYTES)
        case .sha512: Int(crypto_auth_hmacsha512_BYTES)
        }
    }

    /// HMAC(key, parts[0] || parts[1] || …) written to `output` (`outputSize` bytes).
    func authenticate(key: UnsafeRawBufferPointer, parts: [UnsafeRawBufferPointer], into output: UnsafeMutableRawPointer) {
        ensureSodium()
        // libsodium declares the key non-null even when its length is 0.
        var placeholder: UInt8 = 0
        withUnsafeMutablePointer(to: &placeholder) { placeholderPointer in
            let keyStart = key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(placeholderPointer)
            let out = output.assumingMemoryBound(to: UInt8.self)
            switch self {
            case .sha256:
                var state = crypto_auth_hmacsha256_state()
                crypto_auth_hmacsha256_init(&state, keyStart, key.count)
                for part in parts where part.count > 0 {
                    crypto_auth_hmacsha256_update(&state, part.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
                }
                crypto_auth_hmacsha256_final(&state, out)
                sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
            case .sha512:
                var state = crypto_auth_hmacsha512_state()
                crypto_auth_hmacsha512_init(&state, keyStart, key.count)
                for part in parts where part.count > 0 {
                    crypto_auth_hmacsha512_update(&state, part.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
                }
                crypto_auth_hmacsha512_final(&state, out)
                sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha512_state>.size)
            }
        }
    }
}

/// HKDF (RFC 5869) over HMAC-SHA-256 / HMAC-SHA-512.
public enum HKDF {
    /// HKDF-SHA-256: at most 255 × 32 = 8160 bytes of output.
    public static func sha256(ikm: SecureBytes, salt: [UInt8], info: [UInt8], length: Int) throws -> SecureBytes {
        try derive(.sha256, ikm: ikm, salt: salt, info: info, length: length)
    }

    /// HKDF-SHA-512: at most 255 × 64 = 16320 bytes of output.
    public static func sha512(ikm: SecureBytes, salt: [UInt8], info: [UInt8], length: Int) throws -> SecureBytes {
        try derive(.sha512, ikm: ikm, salt: salt, info: info, length: length)
    }

    private static func derive(_ hmac: HMAC, ikm: SecureBytes, salt: [UInt8], info: [UInt8], length: Int) throws -> SecureBytes {
        let hashLength = hmac.outputSize
        guard length >= 0, length <= 255 * hashLength else {
            throw CryptoError.invalidParameter("HKDF output length \(length) is outside 0...\(255 * hashLength)")
        }
        // Extract: PRK = HMAC(salt, IKM). An absent salt is HashLen zero bytes (RFC 5869 §2.2); HMAC
        // pads short keys with zeros, so the empty salt gives the same PRK.
        let prk = SecureBytes(count: hashLength)
        prk.withUnsafeMutableBytes { prkBytes in
            salt.withUnsafeBytes { saltBytes in
                ikm.withUnsafeBytes { ikmBytes in
                    hmac.authenticate(key: saltBytes, parts: [ikmBytes], into: prkBytes.baseAddress!)
                }
            }
        }
        // Expand: T(i) = HMAC(PRK, T(i-1) || info || i), OKM = first `length` bytes of T(1) || T(2) || ….
        let output = SecureBytes(count: length)
        let block = SecureBytes(count: hashLength)
        prk.withUnsafeBytes { prkBytes in
            info.withUnsafeBytes { infoBytes in
                output.withUnsafeMutableBytes { out in
                    block.withUnsafeMutableBytes { t in
                        var produced = 0
                        var counter: UInt8 = 1
                        while produced < length {
                            let previous = UnsafeRawBufferPointer(start: t.baseAddress, count: counter == 1 ? 0 : hashLength)
                            withUnsafeBytes(of: counter) { counterBytes in
                                hmac.authenticate(key: prkBytes, parts: [previous, infoBytes, counterBytes], into: t.baseAddress!)
                            }
                            let take = Swift.min(hashLength, length - produced)
                            (out.baseAddress! + produced).copyMemory(from: t.baseAddress!, byteCount: take)
                            produced += take
                            counter &+= 1
                        }
                    }
                }
            }
        }
        return output
    }
}
