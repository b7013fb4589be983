import VaultCrypto
import VaultPrimitives

/// The keyring item's secret while a `vault agent` holds the session (format `v2`): the master
/// key sealed under the agent's key, a random 32-byte key that exists only in the agent's locked
/// memory. A copy of the item alone opens nothing; once the agent locks (or stops) its key is
/// zeroed and every copy is useless. The item carries no deadlines: the agent keeps them.
///
/// Text (ASCII): `v2:<epoch>:<sessionId>:<nonce>:<sealed>` with `sessionId` 32 hex (16 random
/// bytes, new at every unlock), `nonce` 24 hex and `sealed` 96 hex =
/// `AES-256-GCM(agentKey, nonce, masterKey, AAD = "vault-agent-session-v2|<vaultId>|<epoch>|<sessionId>")`.
public struct AgentWrappedKey: Sendable, Equatable {
    /// The keyslot epoch of the wrapped master key.
    public let epoch: UInt32
    /// Names the agent session that wrapped it (16 bytes).
    public let sessionId: [UInt8]
    public let nonce: [UInt8]
    /// The sealed master key and its tag (48 bytes).
    public let sealed: [UInt8]

    static let prefix = "v2:"

    /// The associated data that binds the sealed key to its vault, epoch and session.
    public static func aad(vaultId: String, epoch: UInt32, sessionId: [UInt8]) -> [UInt8] {
        Array("vault-agent-session-v2|\(vaultId)|\(epoch)|\(Hex.encode(sessionId))".utf8)
    }

    /// Seals `masterKey` under `agentKey` with a fresh random nonce.
    public static func wrap(masterKey: SecureBytes, agentKey: SecureBytes, vaultId: String, epoch: UInt32,
                            sessionId: [UInt8]) throws -> AgentWrappedKey {
        let nonce = SecureRandom.bytes(AESGCMKey.nonceSize)
        let aad = Self.aad(vaultId: vaultId, epoch: epoch, sessionId: sessionId)
        var sealed = [UInt8](repeating: 0, count: masterKey.count + AESGCMKey.tagSize)
        let key = try AESGCMKey(agentKey)
        _ = try masterKey.withUnsafeBytes { mk in
            try aad.withUnsafeBytes { ad in
                try sealed.withUnsafeMutableBytes { out in try key.seal(nonce: nonce, plaintext: mk, aad: ad, into: out) }
            }
        }
        return AgentWrappedKey(epoch: epoch, sessionId: sessionId, nonce: nonce, sealed: sealed)
    }

    /// Opens the master key with `agentKey`; throws `.locked` when it does not open (another
    /// agent's session, an altered item, or a key that is gone).
    public func unwrap(agentKey: SecureBytes, vaultId: String) throws -> SecureBytes {
        do {
            return try AESGCMKey(agentKey).open(nonce: nonce, ciphertextAndTag: sealed,
                                                aad: Self.aad(vaultId: vaultId, epoch: epoch, sessionId: sessionId))
        } catch {
            throw VaultError(.locked, "the vault is locked: the keyring item belongs to another agent session",
                             hint: "run `vault unlock`")
        }
    }

    /// The item text.
    var text: String {
        Self.prefix + "\(epoch):\(Hex.encode(sessionId)):\(Hex.encode(nonce)):\(Hex.encode(sealed))"
    }

    /// Parses the item text; nil unless it is exactly the `v2` form.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> AgentWrappedKey? {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0] == "v2", let epoch = UInt32(fields[1]),
              let sid = Hex.decode(String(fields[2])), sid.count == 16,
              let nonce = Hex.decode(String(fields[3])), nonce.count == AESGCMKey.nonceSize,
              let sealed = Hex.decode(String(fields[4])), sealed.count == 32 + AESGCMKey.tagSize else { return nil }
        return AgentWrappedKey(epoch: epoch, sessionId: sid, nonce: nonce, sealed: sealed)
    }
}
