import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// What `vault backup import` restored.
public struct BackupImportReport: Codable, Sendable {
    /// The restored vault's id (hex).
    public var vaultId: String
    /// Files restored: keyslots, database and every sealed blob.
    public var files: Int
    /// Bytes restored (as on disk, encrypted).
    public var bytes: UInt64
    /// Problems `doctor --verify` found in the restored vault (damage that was already in the source).
    public var problems: [String]
    /// True when `--new-password-file` added a password slot.
    public var passwordAdded: Bool
}

/// Reading portable backup bundles.
public enum BackupBundle {
    /// `passphrase` or `recovery-key`: what opens the bundle at `path` (read from its key block).
    public static func protection(of path: String) throws -> String {
        let file = try openBundle(path)
        return try readTrailer(fd: file.fd, size: file.size).kindName
    }

    /// The bundle, opened without blocking (a FIFO is refused, never waited on).
    public static func openBundle(_ path: String) throws -> SourceFile {
        try SourceFile(path, accepting: .regular, what: "the bundle")
    }

    static func readTrailer(fd: Int32, size: UInt64) throws -> BundleTrailer {
        let minimum = UInt64(BundleTrailer.size + SealedBlobHeader.size + 16)
        guard size >= minimum else {
            throw VaultError(.integrity, "not a vault backup bundle, or it is truncated (\(size) bytes)", hint: "nothing was imported")
        }
        var block = [UInt8](repeating: 0, count: BundleTrailer.size)
        let n = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(size) - off_t(BundleTrailer.size)) }
        guard n == BundleTrailer.size else { throw VaultError(.io, "cannot read the bundle's key block") }
        let t = try BundleTrailer(bytes: block)
        guard t.streamLength == size - UInt64(BundleTrailer.size) else {
            throw VaultError(.integrity, "the bundle is truncated or has bytes added (its length does not match its key block)",
                             hint: "use the complete file `vault backup export` wrote; nothing was imported")
        }
        return t
    }

    /// Restores the bundle at `path` into `layout.root`, which must not exist or be an empty folder.
    ///
    /// Everything is checked before anything is published: the key block unwraps with `secret`;
    /// every segment of the sealed stream authenticates in order up to its final segment; the
    /// framing holds exactly the announced entries, each of its announced size, at allowed paths;
    /// the keyslot file's MAC and the database open with the bundle's master key; every blob
    /// authenticates (`doctor --verify`). The files are written into a 0700 temp folder beside the
    /// target and renamed into place at the end; on any failure the temp folder is removed.
    /// With `newPassword`, a password slot is added (the original slots are kept). The restored
    /// vault gets a device id of its own (`Vault.forgetDeviceIdentity`): it is a new device to the
    /// server, not a clone of the one that exported it.
    ///
    /// The temp folder is locked (`.import.lock`) while the import runs; a killed import's folder
    /// is removed by the next `vault` command (`removeAbandonedImports`).
    @discardableResult
    public static func importBundle(from path: String, into layout: VaultLayout, secret: BackupSecret,
                                     newPassword: (SecureBytes, KDFParameters)? = nil) throws -> BackupImportReport {
        try importBundle(from: try openBundle(path), into: layout, secret: secret, newPassword: newPassword)
    }

    /// Like `importBundle(from:into:secret:newPassword:)`, from a bundle already opened (open it
    /// before anything else is locked).
    @discardableResult
    public static func importBundle(from bundle: SourceFile, into layout: VaultLayout, secret: BackupSecret,
                                     newPassword: (SecureBytes, KDFParameters)? = nil) throws -> BackupImportReport {
        let target = layout.root
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDir) {
            let contents = isDir.boolValue ? ((try? FileManager.default.contentsOfDirectory(atPath: target)) ?? ["?"]) : ["?"]
            if !contents.isEmpty {
                throw VaultError(.alreadyExists, "\(target) is not empty: a backup is only imported into an empty vault folder",
                                 hint: "set VAULT_HOME to a new folder (or move the existing vault away); nothing was changed")
            }
        }
        let fd = bundle.fd
        let trailer = try readTrailer(fd: fd, size: bundle.size)
        let bundleKey: SecureBytes
        switch secret {
        case .passphrase(let p):
            // Its NFC form; then, for a bundle written before passphrases were normalised, as typed.
            let candidates = PasswordText.candidates(p)
            var opened: SecureBytes?
            for (i, c) in candidates.enumerated() where opened == nil {
                do { opened = try trailer.unwrap(kek: try trailer.kek(passphrase: c, recoveryKey: nil)) } catch let e as VaultError
                    where e.kind == .wrongPassword && i < candidates.count - 1 {}
            }
            bundleKey = opened!
        case .recoveryKey(let k): bundleKey = try trailer.unwrap(kek: try trailer.kek(passphrase: nil, recoveryKey: k))
        }

        let (parent, name) = splitPath(target)
        if !POSIX.exists(parent) { try POSIX.ensurePrivateDirectory(parent) }
        if let free = POSIX.freeBytes(at: parent), free < trailer.streamLength + BlobStore.freeSpaceReserve {
            throw VaultError(.noSpace, "not enough free space to import: needs about \(ByteCount.format(trailer.streamLength)), \(ByteCount.format(free)) free",
                             hint: "free some space and try again; nothing was changed")
        }
        let (temp, claim) = try claimImportFolder(in: parent, for: name)
        let staging = VaultLayout(root: temp)
        var published = false
        defer {
            if !published { removeImportFolder(temp) }
            close(claim)
        }
        for d in staging.directories { try POSIX.ensurePrivateDirectory(d) }

        let parser = BundleBodyParser(directory: temp)
        do {
            let reader = try SealedBlobReader(fileDescriptor: fd, fileSize: trailer.streamLength, wrapKey: bundleKey,
                                              expectedVaultId: BundleTrailer.streamDomain, expectedBlobId: trailer.bundleId)
            try reader.stream { try parser.consume($0) }
        } catch let e as CryptoError {
            switch e {
            case .authenticationFailed(let m), .invalidFormat(let m):
                throw VaultError(.integrity, "the bundle is damaged or was tampered with (\(m))", hint: "nothing was imported")
            default:
                throw VaultError(.internalError, "cannot read the bundle: \(e)")
            }
        }
        try parser.finish()
        guard let master = parser.masterKey else { throw VaultError(.integrity, "the bundle holds no master key") }

        var report = BackupImportReport(vaultId: Hex.encode(parser.vaultId), files: parser.entries.count,
                                        bytes: parser.entries.reduce(0) { $0 + $1.size }, problems: [], passwordAdded: false)
        do {
            let (file, _) = try Vault.readKeyslots(staging)
            guard file.vaultId == parser.vaultId else {
                throw VaultError(.integrity, "the bundle's keyslot file belongs to another vault", hint: "nothing was imported")
            }
            let vault = try Vault.open(layout: staging, masterKey: master)
            report.problems = try vault.doctor(verify: true).problems
            try vault.forgetDeviceIdentity()
            if let (pw, kdf) = newPassword {
                try vault.setPassword(pw, kdf: kdf, replacingAll: false)
                report.passwordAdded = true
            }
        }
        TestHooks.crashPoint("backup-import-restored")
        try POSIX.fsyncDirectory(temp)
        if rename(temp, target) != 0 {
            throw VaultError(.io, "cannot move the restored vault into \(target): \(POSIX.errnoMessage())", hint: "nothing was changed")
        }
        published = true
        unlink(target + "/" + importLockName)   // after the rename: the claim held until the folder left its temp name
        try POSIX.fsyncDirectory(parent)
        return report
    }
}
