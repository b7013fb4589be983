import VaultCrypto

/// Keys derived from the master key, each for one purpose (domain separation by HKDF info).
///
/// `HKDF-SHA256(ikm: masterKey, salt: vaultId, info: "vault/v1/<purpose>", L: 32)`.
public struct KeyHierarchy {
    public let vaultId: [UInt8]
    public let epoch: UInt32
    /// The raw SQLCipher key of the metadata database.
    public let databaseKey: SecureBytes
    /// Wraps each blob's random data key (blob header, key epoch = `epoch`).
    public let blobWrapKey: SecureBytes
    /// Authenticates the keyslot file.
    public let keyslotMacKey: SecureBytes
    /// AES-256-SIV key (64 bytes) of the name tokens the server stores (SECURITY.md "End to end").
    public let remoteNameKey: SecureBytes
    /// AES-256-GCM key of the node and content records the server stores.
    public let remoteMetaKey: SecureBytes
    /// Wraps the previous epoch's master key in the key history.
    public let historyKey: SecureBytes

    public static let databaseInfo = "vault/v1/database"
    public static let blobWrapInfo = "vault/v1/blob-wrap"
    public static let keyslotMacInfo = "vault/v1/keyslot-mac"
    public static let remoteNameInfo = "vault/v1/remote-name"
    public static let remoteMetaInfo = "vault/v1/remote-meta"
    public static let historyInfo = "vault/v1/key-history"

    public init(masterKey: SecureBytes, vaultId: [UInt8], epoch: UInt32) throws {
        self.vaultId = vaultId
        self.epoch = epoch
        databaseKey = try HKDF.sha256(ikm: masterKey, salt: vaultId, info: Array(Self.databaseInfo.utf8), length: 32)
        blobWrapKey = try HKDF.sha256(ikm: masterKey, salt: vaultId, info: Array(Self.blobWrapInfo.utf8), length: 32)
        keyslotMacKey = try HKDF.sha256(ikm: masterKey, salt: vaultId, info: Array(Self.keyslotMacInfo.utf8), length: 32)
        remoteNameKey = try HKDF.sha256(ikm: masterKey, salt: vaultId, info: Array(Self.remoteNameInfo.utf8), length: 64)
        remoteMetaKey = try HKDF.sha256(ikm: masterKey, salt: vaultId, info: Array(Self.remoteMetaInfo.utf8), length: 32)
        historyKey = try HKDF.sha256(ikm: masterKey, salt: vaultId, info: Array(Self.historyInfo.utf8), length: 32)
    }
}
