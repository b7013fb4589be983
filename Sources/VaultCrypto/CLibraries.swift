internal import COpenSSL
internal import CSodium

/// libsodium must be initialised once before use. `sodium_init` is itself thread-safe, and a
/// global `let` is initialised exactly once (swift_once), so this is the whole of the lazy init.
private let sodiumInitialization: Bool = sodium_init() >= 0

/// Call at the top of every entry point that reaches libsodium.
@inline(__always)
func ensureSodium() {
    precondition(sodiumInitialization, "sodium_init() failed")
}

/// The OpenSSL error queue as one sentence, and the queue emptied (so a later failure does not
/// report a stale reason).
func openSSLFailure(_ operation: String) -> CryptoError {
    var reasons: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    let detail = reasons.isEmpty ? "no OpenSSL error recorded" : reasons.joined(separator: "; ")
    return .internalFailure("\(operation) failed: \(detail)")
}

