import Foundation
import VaultPrimitives

/// HS256 JSON Web Tokens: `sub` = user id, `gen` = the user's token generation when issued
/// (absent in tokens from before generations: 0), `iat`, `exp`.
struct TokenSigner: Sendable {
    private let secret: [UInt8]

    init(secret: [UInt8]) { self.secret = secret }

    /// Loads the secret from `path`, creating a random 32-byte one (mode 0600) on first start.
    static func loadOrCreate(path: String) throws -> TokenSigner {
        if FileSystem.exists(path) {
            let bytes = try FileSystem.readAll(path)
            guard bytes.count >= 32 else { throw APIError.internal("JWT secret in \(path) is shorter than 32 bytes") }
            return TokenSigner(secret: bytes)
        }
        let secret = Sodium.randomBytes(32)
        try FileSystem.writeAtomically(secret, to: path)
        return TokenSigner(secret: secret)
    }

    /// A token for `userId` in its token generation `generation`, valid for `ttl` seconds.
    func issue(userId: String, generation: Int64, ttl: Int, now: Date = Date()) -> (token: String, expiresAt: Date) {
        let exp = Int(now.timeIntervalSince1970) + ttl
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims: [String: Any] = ["sub": userId, "gen": generation, "iat": Int(now.timeIntervalSince1970), "exp": exp]
        let payloadBytes = (try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])) ?? Data()
        let signingInput = header + "." + Base64URL.encode([UInt8](payloadBytes))
        let sig = Sodium.hmacSHA256(key: secret, message: Array(signingInput.utf8))
        return (signingInput + "." + Base64URL.encode(sig), Date(timeIntervalSince1970: TimeInterval(exp)))
    }

    /// The user id and generation of a validly signed, unexpired token, else nil (the caller
    /// compares the generation with the user's current one).
    func verify(_ token: String, now: Date = Date()) -> (userId: String, generation: Int64)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count < 4096,
              let headerBytes = Base64URL.decode(parts[0]),
              let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
              header["alg"] as? String == "HS256",
              let sig = Base64URL.decode(parts[2]) else { return nil }
        let expected = Sodium.hmacSHA256(key: secret, message: Array((parts[0] + "." + parts[1]).utf8))
        guard Sodium.constantTimeEqual(sig, expected),
              let payload = Base64URL.decode(parts[1]),
              let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let sub = claims["sub"] as? String,
              let exp = (claims["exp"] as? NSNumber)?.doubleValue,
              exp > now.timeIntervalSince1970 else { return nil }
        guard let gen = claims["gen"] else { return (sub, 0) }
        guard let n = gen as? NSNumber, let g = Int64(exactly: n.doubleValue) else { return nil }
        return (sub, g)
    }
}
