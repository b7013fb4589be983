internal import COpenSSL
import VaultPrimitives

/// AES-SIV (RFC 5297, S2V with AES-CMAC then AES-CTR) through OpenSSL 3's provider ciphers
/// `AES-128-SIV`, `AES-192-SIV` and `AES-256-SIV` (keys of 32, 48 or 64 bytes: MAC key ‖ CTR key).
///
/// Deterministic authenticated encryption: the same key, associated data and plaintext always give
/// the same output, which is what lets a server that sees only ciphertext still enforce "one name
/// per folder". The output is `SIV (16 bytes) ‖ ciphertext`, as RFC 5297 §2.6 writes it. Each
/// element of `associatedData` is one S2V input (RFC 5297 §2.4), in order; at most 126.
///
/// OpenSSL 3.0 cannot process an empty plaintext in SIV mode, so an empty plaintext is refused
/// (`invalidParameter`) rather than produced differently on other OpenSSL versions.
/// The provider ciphers, fetched once (a fetch per message cost more than the message) and
/// never freed: they live as long as the process.
private struct FetchedSIVCipher: @unchecked Sendable {
    let cipher: OpaquePointer?
}

private let sivCiphers: [Int: FetchedSIVCipher] = [
    32: FetchedSIVCipher(cipher: EVP_CIPHER_fetch(nil, "AES-128-SIV", nil)),
    48: FetchedSIVCipher(cipher: EVP_CIPHER_fetch(nil, "AES-192-SIV", nil)),
    64: FetchedSIVCipher(cipher: EVP_CIPHER_fetch(nil, "AES-256-SIV", nil)),
]

public enum AESSIV {
    /// Length of the synthetic IV (the tag) in front of the ciphertext.
    public static let tagSize = 16

    /// `SIV ‖ C` for `plaintext` under `key` with the S2V inputs `associatedData`.
    public static func seal(key: SecureBytes, plaintext: some Collection<UInt8>, associatedData: [[UInt8]]) throws -> [UInt8] {
        let message = Array(plaintext)
        guard !message.isEmpty else { throw CryptoError.invalidParameter("AES-SIV needs a non-empty plaintext") }
        let context = try Context(key: key, encrypt: true, associatedData: associatedData)
        var out = [UInt8](repeating: 0, count: tagSize + message.count)
        try out.withUnsafeMutableBufferPointer { buffer throws(CryptoError) in
            let base = buffer.baseAddress!
            var written: Int32 = 0
            guard message.withUnsafeBufferPointer({
                EVP_EncryptUpdate(context.ctx, base + tagSize, &written, $0.baseAddress, Int32($0.count))
            }) == 1, Int(written) == message.count else { throw openSSLFailure("EVP_EncryptUpdate (AES-SIV)") }
            guard EVP_EncryptFinal_ex(context.ctx, base + tagSize, &written) == 1 else { throw openSSLFailure("EVP_EncryptFinal_ex (AES-SIV)") }
            guard EVP_CIPHER_CTX_ctrl(context.ctx, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), base) == 1 else {
                throw openSSLFailure("EVP_CTRL_AEAD_GET_TAG (AES-SIV)")
            }
        }
        return out
    }

    /// The plaintext of `sealed` (`SIV ‖ C`), or `authenticationFailed` when the SIV does not
    /// verify (wrong key, other associated data, or any changed byte). Nothing is returned then.
    public static func open(key: SecureBytes, sealed: some Collection<UInt8>, associatedData: [[UInt8]]) throws -> [UInt8] {
        let input = Array(sealed)
        guard input.count > tagSize else {
            throw CryptoError.authenticationFailed("AES-SIV input of \(input.count) bytes is too short")
        }
        let context = try Context(key: key, encrypt: false, associatedData: associatedData, tag: Array(input[..<tagSize]))
        var out = [UInt8](repeating: 0, count: input.count - tagSize)
        let verified = input.withUnsafeBufferPointer { inBuffer in
            out.withUnsafeMutableBufferPointer { outBuffer -> Bool in
                var written: Int32 = 0
                // For SIV the tag is checked by the update that processes the ciphertext.
                let updated = EVP_DecryptUpdate(context.ctx, outBuffer.baseAddress, &written,
                                                inBuffer.baseAddress! + tagSize, Int32(inBuffer.count - tagSize)) == 1
                let finished = updated && EVP_DecryptFinal_ex(context.ctx, outBuffer.baseAddress, &written) == 1
                return finished
            }
        }
        ERR_clear_error()
        guard verified else {
            out.wipe()
            throw CryptoError.authenticationFailed("AES-SIV")
        }
        return out
    }

    /// One EVP context set up with the key and the associated-data inputs.
    private final class Context {
        let ctx: OpaquePointer

        init(key: SecureBytes, encrypt: Bool, associatedData: [[UInt8]], tag: [UInt8]? = nil) throws {
            let name: String
            switch key.count {
            case 32: name = "AES-128-SIV"
            case 48: name = "AES-192-SIV"
            case 64: name = "AES-256-SIV"
            default: throw CryptoError.invalidParameter("an AES-SIV key is 32, 48 or 64 bytes, not \(key.count)")
            }
            guard associatedData.count <= 126 else { throw CryptoError.invalidParameter("AES-SIV takes at most 126 associated-data inputs") }
            guard let cipher = sivCiphers[key.count]?.cipher else { throw openSSLFailure("EVP_CIPHER_fetch(\(name))") }
            guard let ctx = EVP_CIPHER_CTX_new() else { throw openSSLFailure("EVP_CIPHER_CTX_new") }
            self.ctx = ctx
            let keyed = key.withUnsafeBytes { k in
                encrypt ? EVP_EncryptInit_ex(ctx, cipher, nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
                        : EVP_DecryptInit_ex(ctx, cipher, nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
            }
            guard keyed == 1 else { throw openSSLFailure("EVP_CipherInit_ex (AES-SIV key)") }
            if var tag {
                guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), &tag) == 1 else {
                    throw openSSLFailure("EVP_CTRL_AEAD_SET_TAG (AES-SIV)")
                }
            }
            for component in associatedData {
                var written: Int32 = 0
                // A NULL output passes one S2V associated-data input; an empty one still counts
                // (given a valid pointer and length 0).
                let bytes = component.isEmpty ? [0] : component
                let ok = bytes.withUnsafeBufferPointer { c in
                    encrypt ? EVP_EncryptUpdate(ctx, nil, &written, c.baseAddress, Int32(component.count))
                            : EVP_DecryptUpdate(ctx, nil, &written, c.baseAddress, Int32(component.count))
                }
                guard ok == 1 else { throw openSSLFailure("EVP_CipherUpdate (AES-SIV associated data)") }
            }
        }

        deinit { EVP_CIPHER_CTX_free(ctx) }   // cleanses the key schedule
    }
}
