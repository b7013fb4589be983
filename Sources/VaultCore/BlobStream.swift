internal import CLinuxShims
import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A blob being sealed a piece at a time, across as many calls as the caller needs (the mount's
/// sequential writes): the pieces are hashed and sealed as they come into `tmp/<id>.partial`, or,
/// `unnamed`, into a file of `tmp/` with no name at all (`O_TMPFILE`: nothing can remove it, and
/// nothing of it outlives the process), which becomes a blob only through
/// `BlobStore.publish(_:area:durable:)` (renamed, or linked under its name). Dropped unpublished
/// (`abandon`, or freed), its partial is removed. It holds the blob's own random data key (inside
/// its writer), never a key of the vault, so it may outlive the vault instance that began it.
public final class BlobStream {
    public let id: String
    /// The key epoch its header was sealed under.
    public let keyEpoch: UInt32
    let path: String
    /// No name in `tmp/` (`O_TMPFILE`): published by linking it, read back through `/proc/self/fd`.
    let unnamed: Bool
    private(set) var fd: Int32
    private let sink: BufferedSink
    private let writer: SealedBlobWriter
    private let hasher = ParallelHasher()
    /// Plaintext bytes appended so far.
    public private(set) var size: UInt64 = 0
    private var finished = false

    init(id: String, idBytes: [UInt8], in folder: String, keys: KeyHierarchy, unnamed: Bool, sealedDigest: Bool,
         sizeHint: UInt64?) throws {
        self.id = id
        self.unnamed = unnamed
        keyEpoch = keys.epoch
        if unnamed {
            fd = CLinuxShims_open_unnamed(folder)
            guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: folder) }
            path = "/proc/self/fd/\(fd)"
        } else {
            path = folder + "/" + id + ".partial"
            fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: path) }
        }
        let capacity = sizeHint.map { Int(min(BlobStore.sealedSize(plaintextSize: $0), UInt64(BufferedSink.defaultCapacity))) }
        // A blob known to be small keeps no sealed digest: none is computed.
        let small = sizeHint.map { !BlobRecord.keepsSealedDigest(sealedSize: BlobStore.sealedSize(plaintextSize: $0)) } ?? false
        // Messages name an unnamed file by its folder and blob id, not by its /proc path.
        sink = BufferedSink(fd: fd, path: unnamed ? "\(folder)/\(id) (a blob not yet published)" : path,
                            capacity: capacity ?? BufferedSink.defaultCapacity, hashing: sealedDigest && !small)
        do {
            writer = try SealedBlobWriter(vaultId: keys.vaultId, blobId: idBytes, keyEpoch: keys.epoch,
                                          wrapKey: keys.blobWrapKey, computeChecksum: false, sizeHint: sizeHint, sink: sink.write)
        } catch {
            close(fd); if !unnamed { unlink(path) }
            throw BlobStore.mapCrypto(error, blob: id)
        }
    }

    deinit { abandon() }

    /// Seals `piece` after what came before: a large piece is hashed on a second core while it
    /// is sealed and written on this one; a small one (under `parallelPiece`) on this core, where
    /// handing it over would cost more than hashing it. After a failure the stream takes nothing
    /// more (abandon it).
    public func append(_ piece: UnsafeRawBufferPointer) throws {
        guard fd >= 0, !finished else { throw VaultError(.internalError, "blob stream \(id) is closed") }
        do {
            if piece.count >= Self.parallelPiece {
                try inParallel({ hasher.update(piece) }, { try writer.write(piece) })
            } else {
                hasher.update(piece)
                try writer.write(piece)
            }
        } catch { throw BlobStore.mapCrypto(error, blob: id) }
        size += UInt64(piece.count)
    }

    /// The smallest piece hashed on another core (a thread hand-over costs tens of microseconds).
    static let parallelPiece = 128 << 10

    /// Seals the final segment and writes out what is buffered: the partial is then a whole
    /// blob of the bytes appended (readable, not yet published). Idempotent.
    func finish() throws {
        guard !finished else { return }
        guard fd >= 0 else { throw VaultError(.internalError, "blob stream \(id) is closed") }
        do { _ = try writer.finish(); try sink.flush() } catch { throw BlobStore.mapCrypto(error, blob: id) }
        finished = true
    }

    /// The record of the finished blob in `area`.
    func record(area: BlobArea) -> BlobRecord {
        BlobRecord(id: id, area: area, size: size, sealedSize: sink.total, sha256: Hex.encode(hasher.finalize()),
                   keyEpoch: keyEpoch, sealedSHA256: BlobRecord.keepsSealedDigest(sealedSize: sink.total) ? sink.sealedSHA256 : nil)
    }

    /// Hands the descriptor over (to `publish`, which closes it); the stream is then spent.
    func takeDescriptor() -> Int32 {
        let d = fd
        fd = -1
        return d
    }

    /// Drops the stream and its partial (nothing of it was published).
    public func abandon() {
        guard fd >= 0 else { return }
        close(fd)
        if !unnamed { unlink(path) }
        fd = -1
    }
}

extension BlobStore {
    /// A new blob to seal a piece at a time (`BlobStream.append`), then `publish`; `unnamed`:
    /// with no name until it is published (throws where the filesystem has no `O_TMPFILE`).
    /// `sealedDigest` false: the SHA-256 of its sealed bytes is not computed as they are written
    /// (one hash fewer on the writer's core) and is left to the upload (`uploadSHA256`), which
    /// computes it from the file once. `sizeHint`: the plaintext size expected, when known (a
    /// small blob then gets small buffers). `id`: the blob's 16 random bytes, when the caller drew
    /// them (a batch draws its ids at once, in order); a fresh draw otherwise.
    public func beginStream(unnamed: Bool = false, sealedDigest: Bool = true, sizeHint: UInt64? = nil,
                            id: [UInt8]? = nil) throws -> BlobStream {
        let idBytes = id ?? SecureRandom.bytes(16)
        precondition(idBytes.count == 16, "a blob id is 16 bytes")
        return try BlobStream(id: Hex.encode(idBytes), idBytes: idBytes, in: layout.tempDirectory, keys: keys,
                              unnamed: unnamed, sealedDigest: sealedDigest, sizeHint: sizeHint)
    }

    /// Finishes `stream` and moves it into `area` (durable: fsynced, then renamed, then the
    /// folder fsynced); the stream is spent. A stream of another key epoch than the vault's now
    /// (a rotation since it began) is refused (`.conflict`): read it back (`reopen`) and seal it again.
    public func publish(_ stream: BlobStream, area: BlobArea, durable: Bool = true) throws -> BlobRecord {
        guard stream.keyEpoch == keys.epoch else {
            throw VaultError(.conflict, "blob \(stream.id) was sealed under key epoch \(stream.keyEpoch), the vault is at \(keys.epoch)")
        }
        try stream.finish()
        let record = stream.record(area: area)
        if stream.unnamed {
            try publishUnnamed(fd: stream.takeDescriptor(), at: stream.path, id: stream.id, area: area, durable: durable)
        } else {
            try publish(fd: stream.takeDescriptor(), tmp: stream.path, id: stream.id, area: area, durable: durable)
        }
        return record
    }

    /// As `publish(fd:tmp:id:area:durable:)` for a file with no name (`procPath`, its
    /// `/proc/self/fd` path): fsync, link it into `area` under its name, fsync the folder.
    /// Closes `fd` in every case.
    private func publishUnnamed(fd: Int32, at procPath: String, id: String, area: BlobArea, durable: Bool) throws {
        defer { close(fd) }
        if durable && fsync(fd) != 0 { throw POSIX.mapWriteError(errno, path: path(id: id, area: area)) }
        if linkat(AT_FDCWD, procPath, AT_FDCWD, path(id: id, area: area), AT_SYMLINK_FOLLOW) != 0 {
            throw VaultError(.io, "cannot publish blob \(id): \(POSIX.errnoMessage())")
        }
        if durable { try POSIX.fsyncDirectory(directory(area)) }
    }

    /// The stream's content so far, finished into a whole blob and opened for reading (every
    /// segment authenticated as it is read); the stream takes no more appends.
    public func reopen(_ stream: BlobStream) throws -> BlobHandle {
        try stream.finish()
        return try BlobHandle(path: stream.path, id: stream.id, epochs: epochs, lowestEpoch: stream.keyEpoch)
    }
}
