import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// What `vault backup export` wrote.
public struct BackupExportReport: Codable, Sendable {
    /// The bundle file written.
    public var path: String
    /// The exported vault's id (hex).
    public var vaultId: String
    /// `passphrase` or `recovery-key`.
    public var protection: String
    /// Files carried: keyslots, database and every sealed blob.
    public var files: Int
    /// Size of the bundle file.
    public var bundleBytes: UInt64
}

extension Vault {
    /// The vault's files a bundle carries, relative to the root: keyslots, database, the
    /// failed-unlock counter when there is one, then every
    /// sealed blob of the cache and of staging (already encrypted; copied as they are on disk).
    func backupEntries() -> [String] {
        var out = ["keyslots", "metadata.db"]
        // The failed-unlock counter travels too, so its check against the database still holds.
        if POSIX.exists(layout.path("unlock-failures")) { out.append("unlock-failures") }
        for area in [BlobArea.cache, .staging] {
            out += blobs.idsOnDisk(area).sorted().map { "\(area.rawValue)/\($0).blob" }.filter(BundleBody.isAllowed)
        }
        return out
    }

    /// Writes a portable backup bundle of this vault to `path` (which must not exist), streaming in
    /// constant memory: a sealed stream under a random bundle key, then the key block with the bundle
    /// key wrapped under the backup passphrase or the recovery key (SECURITY.md "Portable backup
    /// bundle"). Written to a 0600 temp file beside `path`, fsynced and renamed into place.
    @discardableResult
    public func exportBackup(to path: String, protection: BackupProtection) throws -> BackupExportReport {
        if POSIX.exists(path) {
            throw VaultError(.alreadyExists, "\(path) already exists", hint: "choose a new file name; an existing bundle is never overwritten")
        }
        let kind: UInt8
        var ops: UInt64 = 0, mem: UInt64 = 0
        switch protection {
        case .passphrase(_, let o, let m):
            kind = BundleTrailer.kindPassphrase; ops = o; mem = m
        case .recoveryKey(let rk):
            // Only a key that opens this vault's recovery slot: a typo must not make an unopenable bundle.
            guard try keyslots.unlock(recoveryKey: rk).constantTimeEquals(masterKey) else {
                throw VaultError(.wrongPassword, "that recovery key does not open this vault")
            }
            kind = BundleTrailer.kindRecoveryKey
        }
        let entries = backupEntries()
        try checkBlobHeaders()
        var sizes: [UInt64] = []
        for e in entries {
            guard let s = POSIX.fileSize(layout.path(e)) else { throw VaultError(.io, "cannot read \(layout.path(e)) for the backup") }
            sizes.append(s)
        }
        let folder = splitPath(path).folder
        let estimate = sizes.reduce(0, +) / UInt64(SealedBlobHeader.defaultSegmentSize) * 16 + sizes.reduce(0, +) + 1 << 20
        if let free = POSIX.freeBytes(at: folder), free < estimate {
            throw VaultError(.noSpace, "not enough free space for the bundle: needs about \(ByteCount.format(estimate)), \(ByteCount.format(free)) free",
                             hint: "write it to another disk; nothing was written")
        }

        let tmp = path + ".partial-\(getpid())"
        let fd = Glibc.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: tmp) }
        var published = false
        var closed = false
        defer {
            if !closed { close(fd) }
            if !published { unlink(tmp) }
        }
        let sink = BufferedSink(fd: fd, path: tmp)
        let bundleId = SecureRandom.bytes(16)
        let bundleKey = SecureBytes.random(count: 32)
        do {
            let writer = try SealedBlobWriter(vaultId: BundleTrailer.streamDomain, blobId: bundleId, keyEpoch: 1,
                                              wrapKey: bundleKey, sink: sink.write)
            try writer.write(BundleBody.magic + [1, 0, 0, 0] + keyslots.vaultId)
            try masterKey.withUnsafeBytes { try writer.write($0) }
            try writer.write(be32(UInt32(entries.count)))
            for (e, size) in zip(entries, sizes) {
                try writer.write(be16(UInt16(e.utf8.count)) + Array(e.utf8) + be64(size))
                try copyFile(layout.path(e), size: size, into: writer)
            }
            _ = try writer.finish()
            try sink.flush()
        } catch let e as CryptoError {
            throw VaultError(.internalError, "sealing the bundle failed: \(e)")
        }
        var trailer = BundleTrailer(kind: kind, opsLimit: ops, memLimitBytes: mem, bundleId: bundleId, streamLength: sink.total)
        let kek: SecureBytes
        switch protection {
        case .passphrase(let p, _, _): kek = try trailer.kek(passphrase: PasswordText.normalized(p), recoveryKey: SecureBytes?.none)
        case .recoveryKey(let rk): kek = try trailer.kek(passphrase: SecureBytes?.none, recoveryKey: rk)
        }
        try trailer.wrap(bundleKey: bundleKey, kek: kek)
        try POSIX.writeAll(fd: fd, trailer.encoded, path: tmp)
        if fsync(fd) != 0 { throw POSIX.mapWriteError(errno, path: tmp) }
        close(fd); closed = true
        if rename(tmp, path) != 0 { throw VaultError(.io, "cannot publish \(path): \(POSIX.errnoMessage())") }
        published = true
        try POSIX.fsyncDirectory(folder)
        return BackupExportReport(path: path, vaultId: vaultId, protection: trailer.kindName, files: entries.count,
                                  bundleBytes: sink.total + UInt64(BundleTrailer.size))
    }

    /// Opens the header of every blob the bundle carries under the readers' rule (SECURITY.md
    /// "Sealed blob format", reading rule 3): a bundle never carries a copy from before a key
    /// rotation as current content. Only the header is read and its data key unwrapped.
    private func checkBlobHeaders() throws {
        for area in [BlobArea.cache, .staging] {
            for id in blobs.idsOnDisk(area) where BundleBody.isAllowed("\(area.rawValue)/\(id).blob") {
                do { _ = try openBlob(id, area: area) } catch let e as VaultError where e.kind == .integrity {
                    throw VaultError(.integrity, "not exported: \(e.message)", hint: "run `vault doctor --verify`; nothing was written")
                }
            }
        }
    }

    /// Streams exactly `size` bytes of `source` into the sealed writer (1 MiB reads).
    private func copyFile(_ source: String, size: UInt64, into writer: SealedBlobWriter) throws {
        let src = Glibc.open(source, O_RDONLY | O_CLOEXEC)
        guard src >= 0 else { throw VaultError(.io, "cannot read \(source): \(POSIX.errnoMessage())") }
        defer { close(src) }
        let bufSize = Int(max(1, min(1 << 20, size)))   // a small file, a small buffer
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bufSize, alignment: 16)
        defer { buf.deallocate() }
        var left = size
        while left > 0 {
            let n: Int
            do { n = try POSIXIO.read(src, into: UnsafeMutableRawBufferPointer(rebasing: buf[0..<Int(min(UInt64(bufSize), left))])) } catch {
                throw VaultError(.io, "read of \(source) failed: \(error)")
            }
            if n == 0 { throw VaultError(.io, "\(source) shrank while it was being backed up", hint: "run the export again") }
            try writer.write(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            left -= UInt64(n)
        }
    }
}
