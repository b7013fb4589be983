import VaultCrypto

/// How a portable backup bundle's key is protected (SECURITY.md "Portable backup bundle").
public enum BackupProtection {
    /// A backup passphrase stretched with Argon2id at these costs.
    case passphrase(SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)
    /// The vault's recovery key (the one `vault key add-recovery` printed).
    case recoveryKey(SecureBytes)
}

/// The secret offered to open a bundle.
public enum BackupSecret {
    /// The backup passphrase given at export.
    case passphrase(SecureBytes)
    /// The vault's recovery key (parsed with `RecoveryKey.parse`).
    case recoveryKey(SecureBytes)
}

/// The 128-byte key block at the end of a bundle. All integers big-endian.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic ASCII `VAULTBAK` |
/// | 8 | 1 | version = 1 |
/// | 9 | 1 | protection: 1 = passphrase (Argon2id), 2 = recovery key |
/// | 10 | 2 | reserved, 0 |
/// | 12 | 8 | Argon2id opsLimit (0 for a recovery key) |
/// | 20 | 8 | Argon2id memLimitBytes (0 for a recovery key) |
/// | 28 | 16 | salt |
/// | 44 | 16 | bundle id (the sealed stream's blob id) |
/// | 60 | 8 | length of the sealed stream before this block |
/// | 68 | 12 | wrap nonce |
/// | 80 | 48 | AES-256-GCM(KEK, nonce, bundle key, AAD = block[0..<68]) |
///
/// It sits at the end (like a zip central directory) so the sealed stream starts at offset 0, where
/// `SealedBlobReader` reads it, and so export can stream to the last byte before writing it.
struct BundleTrailer {
    static let size = 128
    static let magic = Array("VAULTBAK".utf8)
    static let version: UInt8 = 1
    static let kindPassphrase: UInt8 = 1
    static let kindRecoveryKey: UInt8 = 2
    /// The sealed stream's "vault id" field: a fixed label, so a bundle stream is never taken for a vault blob.
    static let streamDomain = Array("vault-bundle-v1\u{0}".utf8)
    static let kekInfo = Array("vault/v1/backup-kek".utf8)

    var kind: UInt8
    var opsLimit: UInt64
    var memLimitBytes: UInt64
    var salt: [UInt8]
    var bundleId: [UInt8]
    var streamLength: UInt64
    var nonce: [UInt8] = []
    var wrappedKey: [UInt8] = []

    var kindName: String { kind == Self.kindPassphrase ? "passphrase" : "recovery-key" }

    /// block[0..<68], the AAD of the wrapped bundle key.
    var authenticatedPrefix: [UInt8] {
        var out = Self.magic + [Self.version, kind, 0, 0]
        out += be64(opsLimit) + be64(memLimitBytes) + salt + bundleId + be64(streamLength)
        return out
    }

    var encoded: [UInt8] { authenticatedPrefix + nonce + wrappedKey }

    /// Parses and bounds-checks a block (nothing is authenticated until the key unwraps).
    init(bytes b: [UInt8]) throws {
        let damaged = { (what: String) in
            VaultError(.integrity, "not a vault backup bundle, or it is truncated or damaged (\(what))",
                       hint: "use the complete file `vault backup export` wrote; nothing was imported")
        }
        guard b.count == Self.size, Array(b[0..<8]) == Self.magic else { throw damaged("no key block at the end") }
        guard b[8] == Self.version else { throw damaged("unsupported bundle version \(b[8])") }
        guard b[9] == Self.kindPassphrase || b[9] == Self.kindRecoveryKey, b[10] == 0, b[11] == 0 else { throw damaged("bad protection field") }
        kind = b[9]
        opsLimit = readBE64(b, 12); memLimitBytes = readBE64(b, 20)
        salt = Array(b[28..<44]); bundleId = Array(b[44..<60]); streamLength = readBE64(b, 60)
        nonce = Array(b[68..<80]); wrappedKey = Array(b[80..<128])
        if kind == Self.kindPassphrase {
            // Checked before any work: a tampered block must not exhaust memory or time.
            guard KDFParameters.argon2idOpsRange.contains(opsLimit), KDFParameters.argon2idMemoryRange.contains(memLimitBytes) else {
                throw damaged("Argon2id parameters out of range")
            }
        } else if opsLimit != 0 || memLimitBytes != 0 {
            throw damaged("KDF parameters on a recovery-key bundle")
        }
    }

    init(kind: UInt8, opsLimit: UInt64, memLimitBytes: UInt64, bundleId: [UInt8], streamLength: UInt64) {
        self.kind = kind; self.opsLimit = opsLimit; self.memLimitBytes = memLimitBytes
        salt = SecureRandom.bytes(16); self.bundleId = bundleId; self.streamLength = streamLength
    }

    /// The key-encryption key: Argon2id(passphrase, salt) or HKDF-SHA256(recovery key, salt, "vault/v1/backup-kek").
    /// `passphrase` is the bytes to derive from (the caller normalises, see `PasswordText`).
    func kek(passphrase: SecureBytes?, recoveryKey: SecureBytes?) throws -> SecureBytes {
        if kind == Self.kindPassphrase {
            guard let passphrase else {
                throw VaultError(.usage, "this bundle is protected by a backup passphrase", hint: "pass --passphrase-file FILE (or omit it to be asked)")
            }
            return try KDF.argon2id(password: passphrase, salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes, length: 32)
        }
        guard let recoveryKey else {
            throw VaultError(.usage, "this bundle is protected by the vault's recovery key", hint: "pass --recovery-key-file FILE")
        }
        return try HKDF.sha256(ikm: recoveryKey, salt: salt, info: Self.kekInfo, length: 32)
    }

    /// Fills `nonce` and `wrappedKey`: the bundle key sealed under `kek`, bound to every other field.
    mutating func wrap(bundleKey: SecureBytes, kek: SecureBytes) throws {
        nonce = SecureRandom.bytes(12)
        wrappedKey = try AESGCMKey(kek).seal(nonce: nonce, secret: bundleKey, aad: authenticatedPrefix)
    }

    /// The bundle key, or `.wrongPassword` when the secret is wrong or the block was altered.
    func unwrap(kek: SecureBytes) throws -> SecureBytes {
        guard let key = try? AESGCMKey(kek).open(nonce: nonce, ciphertextAndTag: wrappedKey, aad: authenticatedPrefix), key.count == 32 else {
            throw VaultError(.wrongPassword, kind == Self.kindPassphrase
                             ? "wrong backup passphrase (or the bundle's key block was altered)"
                             : "this recovery key does not open the bundle (or its key block was altered)",
                             hint: "nothing was imported; try again")
        }
        return key
    }
}

/// The plaintext inside the sealed stream starts with this 64-byte header, then `entryCount`
/// entries `u16 pathLength ‖ path ‖ u64 size ‖ bytes`.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic ASCII `VAULTBDY` |
/// | 8 | 1 | version = 1 |
/// | 9 | 3 | reserved, 0 |
/// | 12 | 16 | vault id |
/// | 28 | 32 | master key |
/// | 60 | 4 | entryCount |
enum BundleBody {
    static let magic = Array("VAULTBDY".utf8)
    static let headerSize = 64
    static let maxPathLength = 255

    /// The only paths a bundle may hold (relative to the vault root).
    static func isAllowed(_ path: String) -> Bool {
        if path == "keyslots" || path == "metadata.db" || path == "unlock-failures" { return true }
        for area in ["cache/", "staging/"] where path.hasPrefix(area) && path.hasSuffix(".blob") {
            let id = path.dropFirst(area.count).dropLast(5)
            return id.count == 32 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }
        return false
    }
}

func be64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }
func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
func readBE64(_ b: some Collection<UInt8>, _ at: Int) -> UInt64 {
    Array(b).dropFirst(at).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
}

/// Folder and last component of a path (NSString's versions trap on some one-character paths).
func splitPath(_ path: String) -> (folder: String, name: String) {
    var p = path
    while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
    guard let slash = p.lastIndex(of: "/") else { return (".", p) }
    let folder = slash == p.startIndex ? "/" : String(p[..<slash])
    return (folder, String(p[p.index(after: slash)...]))
}
