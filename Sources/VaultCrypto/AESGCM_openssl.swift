internal import COpenSSL
internal import Synchronization

/// The provider implementation of AES-256-GCM, fetched once (an explicit fetch avoids the implicit
/// per-init lookup `EVP_aes_256_gcm()` costs under OpenSSL 3). Never freed: it lives as long as the
/// process.
private struct FetchedCipher: @unchecked Sendable {
    let cipher: OpaquePointer?
}

private let aes256GCMCipher = FetchedCipher(cipher: EVP_CIPHER_fetch(nil, "AES-256-GCM", nil))

/// AES-256-GCM through OpenSSL EVP. The key is set once per direction; each message only sets the
/// IV (`EVP_*Init_ex(ctx, NULL, NULL, NULL, iv)`), which resets the GCM state but keeps the key
/// schedule and GHASH table. An EVP_CIPHER_CTX is not thread-safe, so each is used under a lock.
final class OpenSSLAESGCM: AESGCMEngine, @unchecked Sendable {
    private let encryptContext: OpaquePointer
    private let decryptContext: OpaquePointer
    private let encryptLock = Mutex(())
    private let decryptLock = Mutex(())

    init(key: UnsafeRawBufferPointer) throws {
        guard let cipher = aes256GCMCipher.cipher else { throw openSSLFailure("EVP_CIPHER_fetch(AES-256-GCM)") }
        guard let encrypt = EVP_CIPHER_CTX_new() else { throw openSSLFailure("EVP_CIPHER_CTX_new") }
        guard let decrypt = EVP_CIPHER_CTX_new() else {
            EVP_CIPHER_CTX_free(encrypt)
            throw openSSLFailure("EVP_CIPHER_CTX_new")
        }
        let keyBytes = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // The default IV length of AES-GCM is the 12 bytes we use; no SET_IVLEN needed.
        guard EVP_EncryptInit_ex(encrypt, cipher, nil, keyBytes, nil) == 1,
              EVP_DecryptInit_ex(decrypt, cipher, nil, keyBytes, nil) == 1 else {
            EVP_CIPHER_CTX_free(encrypt)
            EVP_CIPHER_CTX_free(decrypt)
            throw openSSLFailure("EVP_{En,De}cryptInit_ex (key)")
        }
        encryptContext = encrypt
        decryptContext = decrypt
    }

    deinit {
        // EVP_CIPHER_CTX_free cleanses the key schedule.
        EVP_CIPHER_CTX_free(encryptContext)
        EVP_CIPHER_CTX_free(decryptContext)
    }

    func seal(nonce: UnsafeRawPointer, plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws {
        let ctx = encryptContext
        try encryptLock.withLock { _ throws(CryptoError) in
            let out = output.assumingMemoryBound(to: UInt8.self)
            var written: Int32 = 0
            guard EVP_EncryptInit_ex(ctx, nil, nil, nil, nonce.assumingMemoryBound(to: UInt8.self)) == 1 else {
                throw openSSLFailure("EVP_EncryptInit_ex (iv)")
            }
            if aad.count > 0 {
                guard EVP_EncryptUpdate(ctx, nil, &written, aad.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(aad.count)) == 1 else {
                    throw openSSLFailure("EVP_EncryptUpdate (aad)")
                }
            }
            var produced = 0
            if plaintext.count > 0 {
                guard EVP_EncryptUpdate(ctx, out, &written, plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count)) == 1 else {
                    throw openSSLFailure("EVP_EncryptUpdate")
                }
                produced = Int(written)
            }
            guard EVP_EncryptFinal_ex(ctx, out + produced, &written) == 1 else { throw openSSLFailure("EVP_EncryptFinal_ex") }
            produced += Int(written)
            guard produced == plaintext.count else {
                throw CryptoError.internalFailure("EVP AES-GCM produced \(produced) bytes for \(plaintext.count)")
            }
            guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(AESGCMKey.tagSize), out + produced) == 1 else {
                throw openSSLFailure("EVP_CTRL_AEAD_GET_TAG")
            }
        }
    }

    func open(nonce: UnsafeRawPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws -> Bool {
        let ctx = decryptContext
        return try decryptLock.withLock { _ throws(CryptoError) -> Bool in
            let out = output.assumingMemoryBound(to: UInt8.self)
            var written: Int32 = 0
            guard EVP_DecryptInit_ex(ctx, nil, nil, nil, nonce.assumingMemoryBound(to: UInt8.self)) == 1 else {
                throw openSSLFailure("EVP_DecryptInit_ex (iv)")
            }
            if aad.count > 0 {
                guard EVP_DecryptUpdate(ctx, nil, &written, aad.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(aad.count)) == 1 else {
                    throw openSSLFailure("EVP_DecryptUpdate (aad)")
                }
            }
            var produced = 0
            if ciphertext.count > 0 {
                guard EVP_DecryptUpdate(ctx, out, &written, ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(ciphertext.count)) == 1 else {
                    throw openSSLFailure("EVP_DecryptUpdate")
                }
                produced = Int(written)
            }
            // OpenSSL copies the expected tag; the ctrl's pointer is not const but is only read.
            guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(AESGCMKey.tagSize), UnsafeMutableRawPointer(mutating: tag)) == 1 else {
                throw openSSLFailure("EVP_CTRL_AEAD_SET_TAG")
            }
            // Final verifies the tag; ≤ 0 means it did not match. That is not an OpenSSL error.
            let verified = EVP_DecryptFinal_ex(ctx, out + produced, &written) > 0
            ERR_clear_error()
            return verified
        }
    }
}
