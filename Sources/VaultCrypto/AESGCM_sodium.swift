internal import CSodium

/// AES-256-GCM through libsodium's AES-NI implementation with the precomputation interface
/// (`crypto_aead_aes256gcm_beforenm` once, then `*_afternm`). The expanded state is only read after
/// `beforenm`, so one key can be used from several threads at once.
final class SodiumAESGCM: AESGCMEngine, @unchecked Sendable {
    static var isAvailable: Bool {
        ensureSodium()
        return crypto_aead_aes256gcm_is_available() == 1
    }

    /// The expanded key lives in sodium_malloc memory (guarded, locked, wiped on free). The state
    /// must be 16-byte aligned; sodium_malloc places a 512-byte block at the end of a page, so it is.
    private let state: UnsafeMutablePointer<crypto_aead_aes256gcm_state>

    init(key: UnsafeRawBufferPointer) {
        ensureSodium()
        let size = crypto_aead_aes256gcm_statebytes()
        guard let raw = sodium_malloc(size) else { fatalError("sodium_malloc(\(size)) failed") }
        precondition(Int(bitPattern: raw) % 16 == 0, "crypto_aead_aes256gcm_state must be 16-byte aligned")
        state = raw.bindMemory(to: crypto_aead_aes256gcm_state.self, capacity: 1)
        _ = crypto_aead_aes256gcm_beforenm(state, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    deinit {
        sodium_memzero(state, crypto_aead_aes256gcm_statebytes())
        sodium_free(state)
    }

    func seal(nonce: UnsafeRawPointer, plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws {
        let out = output.assumingMemoryBound(to: UInt8.self)
        var tagLength: UInt64 = 0
        let status = crypto_aead_aes256gcm_encrypt_detached_afternm(
            out, out + plaintext.count, &tagLength,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
            nil, nonce.assumingMemoryBound(to: UInt8.self), state)
        guard status == 0, tagLength == UInt64(AESGCMKey.tagSize) else {
            throw CryptoError.internalFailure("crypto_aead_aes256gcm_encrypt_detached_afternm failed")
        }
    }

    func open(nonce: UnsafeRawPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws -> Bool {
        let status = crypto_aead_aes256gcm_decrypt_detached_afternm(
            output.assumingMemoryBound(to: UInt8.self), nil,
            (ciphertext.baseAddress ?? tag).assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
            tag.assumingMemoryBound(to: UInt8.self),
            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
            nonce.assumingMemoryBound(to: UInt8.self), state)
        return status == 0
    }
}
