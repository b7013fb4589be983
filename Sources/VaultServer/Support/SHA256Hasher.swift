internal import COpenSSL

/// Streaming SHA-256 through OpenSSL's EVP interface, which uses the CPU's SHA extensions
/// (about 10× libsodium's portable SHA-256, the bottleneck of uploads otherwise). The
/// corresponding C functions are `EVP_DigestInit_ex`, `EVP_DigestUpdate`, `EVP_DigestFinal_ex`.
struct SHA256Hasher: ~Copyable {
    private let ctx: OpaquePointer

    init() {
        guard let c = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed (out of memory)") }
        precondition(EVP_DigestInit_ex(c, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex(sha256) failed")
        ctx = c
    }

    deinit { EVP_MD_CTX_free(ctx) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(ctx, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The lowercase hex digest (call once).
    mutating func finalizeHex() -> String {
        var out = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        precondition(EVP_DigestFinal_ex(ctx, &out, &len) == 1 && len == 32, "EVP_DigestFinal_ex failed")
        return Sodium.hex(out)
    }
}
