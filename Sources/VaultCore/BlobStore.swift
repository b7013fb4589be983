import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Where a sealed blob lives: `cache` (can be downloaded again, may be evicted) or `staging`
/// (not yet on the server: never evicted).
public enum BlobArea: String, Sendable, Codable {
    case cache, staging
}

/// What the store knows of one sealed blob.
public struct BlobRecord: Sendable, Equatable {
    public var id: String
    public var area: BlobArea
    public var size: UInt64           // plaintext bytes
    public var sealedSize: UInt64     // bytes on disk
    public var sha256: String         // hex SHA-256 of the plaintext
    public var keyEpoch: UInt32
    /// Hex SHA-256 of the sealed bytes as on disk (what an upload sends before any padding), when
    /// known: computed as a blob larger than `BlobRecord.sealedDigestFloor` is written; nil for a
    /// smaller one (an upload reads its bytes once more instead, see `Vault.uploadSHA256`) and for a
    /// downloaded blob.
    public var sealedSHA256: String?

    /// The sealed size up to which a blob's sealed SHA-256 is not kept (1 MiB): computing it from
    /// the file at upload costs one more read of at most this much, and keeping it 33 bytes of
    /// metadata per file (most files of a large vault are small).
    public static let sealedDigestFloor: UInt64 = 1 << 20

    /// Whether a blob of `sealedSize` bytes keeps its sealed SHA-256.
    public static func keepsSealedDigest(sealedSize: UInt64) -> Bool { sealedSize > sealedDigestFloor }

    public init(id: String, area: BlobArea, size: UInt64, sealedSize: UInt64, sha256: String, keyEpoch: UInt32,
                sealedSHA256: String? = nil) {
        self.id = id; self.area = area; self.size = size; self.sealedSize = sealedSize; self.sha256 = sha256
        self.keyEpoch = keyEpoch; self.sealedSHA256 = sealedSHA256
    }
}

/// Sealed content files: each blob is the sealed stream format (SECURITY.md) under its own
/// random data key, written to a 0600 temp file, fsynced, renamed into place and the folder fsynced.
/// Plaintext never touches the disk.
public final class BlobStore {
    let layout: VaultLayout
    /// The keys of every epoch the vault reaches: blobs are written under the current one and
    /// read under the one their header names.
    var epochs: EpochKeys
    var keys: KeyHierarchy { epochs.current }
    /// Bytes kept free beyond what an import needs.
    public static let freeSpaceReserve: UInt64 = 8 << 20

    init(layout: VaultLayout, epochs: EpochKeys) {
        self.layout = layout; self.epochs = epochs
    }

    func directory(_ area: BlobArea) -> String {
        area == .cache ? layout.cacheDirectory : layout.stagingDirectory
    }

    /// The path of blob `id` in `area`.
    public func path(id: String, area: BlobArea) -> String {
        directory(area) + "/" + id + ".blob"
    }

    /// Sealed size on disk of `plaintextSize` bytes.
    public static func sealedSize(plaintextSize: UInt64, segmentSize: Int = SealedBlobHeader.defaultSegmentSize) -> UInt64 {
        let s = UInt64(segmentSize)
        let n = max(1, (plaintextSize + s - 1) / s)
        return UInt64(SealedBlobHeader.size) + plaintextSize + 16 * n
    }

    /// Throws `.noSpace` unless `bytes` more fit on the vault's filesystem with the reserve to spare.
    public func checkFreeSpace(for bytes: UInt64, doing what: String) throws {
        guard let free = POSIX.freeBytes(at: layout.root) else { return }
        let needed = bytes + Self.freeSpaceReserve
        if free < needed {
            throw VaultError(.noSpace, "not enough free space to \(what): needs \(ByteCount.format(needed)), \(ByteCount.format(free)) free",
                             hint: "free some space (vault evict, or elsewhere on the disk) and try again; nothing was changed")
        }
    }

    /// Seals everything `produce` writes into a new blob in `area`, atomically.
    /// `produce` receives a write function; it should stream in pieces (constant memory).
    /// The plaintext SHA-256 is computed on a second core while the first seals and writes.
    /// With `durable: false` the fsyncs are left to the caller, who must make the batch durable
    /// (`BlobStore.syncAll()`) before publishing any metadata that points at it.
    /// `sizeHint`: the plaintext size expected, when known (a small blob then gets small buffers).
    /// `id`: the blob's 16 random bytes, when the caller drew them.
    public func write(area: BlobArea, durable: Bool = true, sizeHint: UInt64? = nil, id: [UInt8]? = nil,
                      _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> BlobRecord {
        // With no name until it is published (one directory entry made, none removed), where the
        // filesystem allows it.
        let stream = try (try? beginStream(unnamed: true, sizeHint: sizeHint, id: id)) ?? beginStream(sizeHint: sizeHint, id: id)
        defer { stream.abandon() }   // unless published
        try produce { piece in
            try stream.append(piece)
            if stream.size >= 4 << 20 { TestHooks.crashPoint("seal-midway") }
        }
        return try publish(stream, area: area, durable: durable)
    }

    /// Writes a blob that may take several runs (a download): the sealed bytes go to
    /// `tmp/<id>.partial`, which survives a failure or a kill. With `resuming` (the id of such a
    /// partial), its authenticated segments are kept and `produce` is told the plaintext offset
    /// to continue from. `onStart` learns the partial's id before any byte is written. On success
    /// the blob is fsynced and published into `area` like `write`. Throw `DiscardPartial` from
    /// `produce` to drop the partial (e.g. the source changed).
    public func writeResumable(area: BlobArea, resuming: String?, onStart: (String) -> Void,
                               _ produce: (_ resumeAt: UInt64, _ emit: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> BlobRecord {
        var id = resuming ?? ""
        var fd: Int32 = -1
        var writer: SealedBlobWriter?
        var resumeAt: UInt64 = 0
        let sinkBox = UncheckedSendable(BufferedSinkRef())
        if let existing = resuming, let idBytes = Hex.decode(existing) {
            let tmp = layout.tempDirectory + "/" + existing + ".partial"
            fd = Glibc.open(tmp, O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                var st = stat(); fstat(fd, &st)
                if let r = try? SealedBlobWriter.resume(partial: fd, fileSize: UInt64(st.st_size), wrapKey: keys.blobWrapKey,
                                                        expectedVaultId: keys.vaultId, expectedBlobId: idBytes,
                                                        sink: { try sinkBox.value.sink!.write($0) }) {
                    _ = ftruncate(fd, off_t(r.keptBytes))
                    _ = lseek(fd, 0, SEEK_END)
                    writer = r.writer; resumeAt = r.resumeAt
                    sinkBox.value.sink = BufferedSink(fd: fd, path: tmp, alreadyWritten: r.keptBytes)
                } else {
                    close(fd); fd = -1; unlink(tmp)
                }
            }
        }
        if writer == nil {
            let idBytes = SecureRandom.bytes(16)
            id = Hex.encode(idBytes)
            let tmp = layout.tempDirectory + "/" + id + ".partial"
            fd = Glibc.open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: tmp) }
            sinkBox.value.sink = BufferedSink(fd: fd, path: tmp)
            writer = try SealedBlobWriter(vaultId: keys.vaultId, blobId: idBytes, keyEpoch: keys.epoch, wrapKey: keys.blobWrapKey,
                                          sink: { try sinkBox.value.sink!.write($0) })
        }
        onStart(id)
        let tmp = layout.tempDirectory + "/" + id + ".partial"
        let sink = sinkBox.value.sink!
        var closed = false
        defer { if !closed { close(fd) } }
        do {
            try produce(resumeAt) { piece in
                try writer!.write(piece)
            }
            // Flush what was produced even when `produce` fails below, so the next run keeps it.
            let size = try writer!.finish()
            try sink.flush()
            closed = true
            try publish(fd: fd, tmp: tmp, id: id, area: area, durable: true)
            return BlobRecord(id: id, area: area, size: size, sealedSize: sink.total,
                              sha256: Hex.encode(writer!.plaintextSHA256 ?? []), keyEpoch: keys.epoch)
        } catch is DiscardPartial {
            unlink(tmp)
            throw DiscardPartial()
        } catch {
            // Keep the complete segments written so far for the next run.
            try? writer!.flushCompleteSegments()
            try? sink.flush()
            throw Self.mapCrypto(error, blob: id)
        }
    }

    /// Makes a finished temp blob durable and moves it into `area`: fsync, close, rename, fsync of
    /// the folder (the fsyncs only when `durable`). Closes `fd` in every case.
    func publish(fd: Int32, tmp: String, id: String, area: BlobArea, durable: Bool) throws {
        if durable && fsync(fd) != 0 { let e = errno; close(fd); throw POSIX.mapWriteError(e, path: tmp) }
        close(fd)
        if rename(tmp, path(id: id, area: area)) != 0 { throw VaultError(.io, "cannot publish blob \(id): \(POSIX.errnoMessage())") }
        if durable { try POSIX.fsyncDirectory(directory(area)) }
    }

    /// Content sealed under an older epoch (written before a rotation) gets its data key
    /// rewrapped under the current epoch's blob wrap key before it is published, as a rotation
    /// does (one 112-byte `pwrite` into the downloaded blob at `fd`; the segments are unchanged):
    /// every blob in the vault folder then names the current epoch, and a copy with the old header
    /// is refused by every reader (SECURITY.md "Sealed blob format", reading rule 3). A write torn
    /// by a kill leaves a partial whose header no longer opens: the next run fetches it again.
    func rewrapToCurrentEpoch(fd: Int32, path: String, blobId: String, from epoch: UInt32?) throws {
        guard let epoch, epoch != epochs.current.epoch else { return }
        var header = [UInt8](repeating: 0, count: SealedBlobHeader.size)
        guard (header.withUnsafeMutableBytes { try? POSIXIO.readFully(fd, into: $0, at: 0) }) == header.count else {
            throw VaultError(.io, "cannot read the header of the downloaded blob \(blobId)")
        }
        let fresh: [UInt8]
        do {
            fresh = try SealedBlobHeader.rewrap(headerBytes: header, oldWrapKey: epochs.blobWrapKey(epoch: epoch),
                                                newWrapKey: epochs.current.blobWrapKey, newEpoch: epochs.current.epoch)
        } catch { throw SealedDownload.lie(error) }
        let n = fresh.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard n == fresh.count else { throw POSIX.mapWriteError(errno, path: path) }
    }

    /// Thrown by a `writeResumable` producer to drop the partial blob.
    public struct DiscardPartial: Error { public init() {} }

    /// Removes a partial blob left in `tmp/`.
    public func deletePartial(_ id: String) { unlink(layout.tempDirectory + "/" + id + ".partial") }

    /// Makes every blob written with `durable: false` durable (one sync of the filesystem).
    public func syncAll() { sync() }

    /// Imports the file at `sourcePath` into a new sealed blob, reading it once in 1 MiB pieces.
    public func importFile(_ sourcePath: String, area: BlobArea, durable: Bool = true, checkSpace: Bool = true) throws -> BlobRecord {
        try importFile(try SourceFile(sourcePath, accepting: .regular), area: area, durable: durable, checkSpace: checkSpace)
    }

    /// Imports an opened regular file into a new sealed blob, reading it once in 1 MiB pieces.
    /// A file that changes while it is read (its size or modification time, or more or fewer bytes
    /// than its size) is refused and nothing is kept. Failures of the source (reading, changing)
    /// throw `SourceProblem`; failures of the vault throw `VaultError`. `id`: the blob's 16 random
    /// bytes, when the caller drew them.
    public func importFile(_ source: SourceFile, area: BlobArea, durable: Bool = true, checkSpace: Bool = true,
                           id: [UInt8]? = nil) throws -> BlobRecord {
        guard source.isRegular else { throw SourceProblem(VaultError(.usage, "\(DisplayText.escaped(source.path)) is not a regular file")) }
        if checkSpace { try checkFreeSpace(for: Self.sealedSize(plaintextSize: source.size), doing: "import \(DisplayText.escaped(source.path))") }
        _ = posix_fadvise(source.fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        // Room for the whole file and a byte more (a file that grew shows at once), up to 1 MiB.
        let bufSize = Int(min(source.size + 1, 1 << 20))
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bufSize, alignment: 16)
        var dirty = 0   // how far plaintext reached in `buf`: only that is zeroed
        defer { memset(buf.baseAddress!, 0, dirty); buf.deallocate() }
        return try write(area: area, durable: durable, sizeHint: source.size, id: id) { emit in
            var total: UInt64 = 0
            while true {
                let n: Int
                do { n = try source.read(into: buf) } catch let e as VaultError { throw SourceProblem(e) }
                if n == 0 { break }
                dirty = max(dirty, n)
                total += UInt64(n)
                if total > source.size { throw SourceProblem(SourceFile.changed(source.path)) }   // it grew
                try emit(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
                // A short read of a regular file is its end; growth since shows in `checkUnchanged`.
                if n < bufSize && total == source.size { break }
            }
            do { try source.checkUnchanged(bytesRead: total) } catch let e as VaultError { throw SourceProblem(e) }
        }
    }

    /// Opens blob `id` for authenticated, random-access reads. Its header must name a key epoch
    /// from `lowestEpoch` (the one the database records for it) up to the current one
    /// (SECURITY.md "Sealed blob format", reading rule 3): an older header is a copy from before
    /// a rotation, refused as tampering (exit 6). Callers go through `Vault.openBlob`, which
    /// knows the recorded epoch.
    func open(_ id: String, area: BlobArea, lowestEpoch: UInt32) throws -> BlobHandle {
        try BlobHandle(path: path(id: id, area: area), id: id, epochs: epochs, lowestEpoch: lowestEpoch)
    }

    /// Moves a blob between areas (e.g. staging → cache once uploaded).
    public func move(_ id: String, from: BlobArea, to: BlobArea) throws {
        guard from != to else { return }
        if rename(path(id: id, area: from), path(id: id, area: to)) != 0 {
            throw VaultError(.io, "cannot move blob \(id): \(POSIX.errnoMessage())")
        }
        try POSIX.fsyncDirectory(directory(to))
    }

    /// Removes a blob file; missing files are fine.
    public func delete(_ id: String, area: BlobArea) {
        unlink(path(id: id, area: area))
    }

    /// Blob ids present on disk in `area`.
    public func idsOnDisk(_ area: BlobArea) -> [String] {
        var ids: [String] = []
        forEachIdOnDisk(area) { ids.append($0) }
        return ids
    }

    /// Calls `body` with each blob id present on disk in `area`, read entry by entry from the
    /// folder (`readdir`: no listing of the whole folder is held).
    public func forEachIdOnDisk(_ area: BlobArea, _ body: (String) throws -> Void) rethrows {
        guard let dir = opendir(directory(area)) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".blob") else { continue }
            try body(String(name.dropLast(5)))
        }
    }

    static func mapCrypto(_ error: Error, blob: String) -> Error {
        guard let c = error as? CryptoError else { return error }
        switch c {
        case .authenticationFailed(let m), .invalidFormat(let m):
            return VaultError(.integrity, "content blob \(blob) is damaged or was tampered with: \(m)",
                              hint: "run `vault doctor`; the content can be downloaded again if it was synced")
        default:
            return VaultError(.internalError, "crypto failure on blob \(blob): \(c)")
        }
    }
}

/// An open sealed blob: authenticated reads only.
public final class BlobHandle {
    let fd: Int32
    public let id: String
    let reader: SealedBlobReader

    init(path: String, id: String, epochs: EpochKeys, lowestEpoch: UInt32) throws {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw VaultError(.integrity, "content blob \(id) is missing from disk", hint: "run `vault doctor`") }
            throw VaultError(.io, "cannot open blob \(id): \(POSIX.errnoMessage())")
        }
        var st = stat()
        fstat(fd, &st)
        do {
            let current = epochs.current.epoch
            let wrapKey = { (epoch: UInt32) throws -> SecureBytes in
                guard epoch >= min(lowestEpoch, current), epoch <= current else {
                    throw CryptoError.authenticationFailed("its header names key epoch \(epoch), where this vault's blob is at epoch \(current) (a copy from before a key rotation?)")
                }
                return try epochs.blobWrapKey(epoch: epoch)
            }
            reader = try SealedBlobReader(fileDescriptor: fd, fileSize: UInt64(st.st_size), wrapKeyForEpoch: wrapKey,
                                          expectedVaultId: epochs.current.vaultId, expectedBlobId: Hex.decode(id) ?? [])
        } catch {
            close(fd)
            throw BlobStore.mapCrypto(error, blob: id)
        }
        self.fd = fd
        self.id = id
    }

    deinit { close(fd) }

    public var plaintextSize: UInt64 { reader.plaintextSize }

    /// Asks the kernel to read ahead the sealed bytes behind plaintext `offset..<offset+length`
    /// (advice only; see `SealedBlobReader.willNeed`).
    public func willNeed(offset: UInt64, length: UInt64) { reader.willNeed(offset: offset, length: length) }

    /// Plaintext from `offset` into `buffer` (as much as fits, clamped to the end), authenticated;
    /// returns the bytes put there. A failed read leaves `buffer` zeroed where it had filled it.
    public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do { return try reader.read(offset: offset, into: buffer) } catch { throw BlobStore.mapCrypto(error, blob: id) }
    }

    /// Streams plaintext from `offset`, segment by segment; nothing of a failing segment is released.
    public func stream(from offset: UInt64 = 0, length: UInt64? = nil, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        do { try reader.stream(from: offset, length: length, body) } catch { throw BlobStore.mapCrypto(error, blob: id) }
    }
}

/// Runs `first` on another thread while `second` runs here; both have finished when it returns.
/// The caller guarantees the two touch disjoint state (here: one hashes, one seals, the same
/// read-only piece of plaintext).
func inParallel(_ first: () -> Void, _ second: () throws -> Void) rethrows {
    try withoutActuallyEscaping(first) { f in
        let job = UncheckedSendable(f)
        let group = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: group) { job.value() }
        defer { group.wait() }
        try second()
    }
}

/// Carries a value across threads where the caller guarantees exclusive use.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// A SHA-256 fed from another thread (one `update` at a time, never concurrently with itself).
final class ParallelHasher: @unchecked Sendable {
    private var hasher = SHA256Hasher()
    func update(_ piece: UnsafeRawBufferPointer) { hasher.update(piece) }
    func finalize() -> [UInt8] { hasher.finalize() }
}

/// A late-bound sink (the writer is made before its file is known when resuming).
final class BufferedSinkRef { var sink: BufferedSink? }

/// Collects sealed output into 1 MiB writes; with `hashing`, also the SHA-256 of every byte
/// written (on the thread that writes: the sealed bytes are hashed as they go to disk).
final class BufferedSink {
    let fd: Int32
    let path: String
    var buffer: UnsafeMutableRawBufferPointer
    var used = 0
    private(set) var total: UInt64 = 0
    private var hasher: SHA256Hasher?

    /// The buffer's size unless told (1 MiB).
    static let defaultCapacity = 1 << 20

    init(fd: Int32, path: String, capacity: Int = defaultCapacity, alreadyWritten: UInt64 = 0, hashing: Bool = false) {
        self.fd = fd; self.path = path; self.total = alreadyWritten
        buffer = .allocate(byteCount: capacity, alignment: 16)
        if hashing && alreadyWritten == 0 { hasher = SHA256Hasher() }
    }

    deinit { buffer.deallocate() }

    /// Hex SHA-256 of everything written (nil without `hashing`); call once, after the last write.
    var sealedSHA256: String? {
        guard var h = hasher else { return nil }
        return Hex.encode(h.finalize())
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        hasher?.update(bytes)
        total += UInt64(bytes.count)
        if bytes.count >= buffer.count {
            try flush()
            try POSIX.writeAll(fd: fd, bytes, path: path)
            return
        }
        if used + bytes.count > buffer.count { try flush() }
        buffer.baseAddress!.advanced(by: used).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        used += bytes.count
    }

    func flush() throws {
        guard used > 0 else { return }
        try POSIX.writeAll(fd: fd, UnsafeRawBufferPointer(rebasing: buffer[0..<used]), path: path)
        used = 0
    }
}
