/// `SHA256Hasher` lives in `VaultDigest` (shared with the server); VaultCrypto's users see it here.
@_exported import VaultDigest
