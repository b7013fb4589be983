import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A remote file's content fetched by segment ranges on demand (SECURITY.md "Sparse partial
/// downloads"; docs/mount.md "Reading"). Two files in `tmp/`, both 0600, never plaintext:
///
/// - `<blobId>.sparse`: the sealed blob's bytes at their own offsets, `sealedSize` long, holes
///   where a segment was not fetched yet;
/// - `<blobId>.segments`: the record of what it holds (`SparseSegmentMap`): one state byte per
///   segment, set only after the segment authenticated and its bytes were made durable.
///
/// The header is fetched first (it fixes the segment size and unwraps the data key); every
/// segment is authenticated alone (`SealedSegmentVerifier`) before it is written, and again by
/// the reader when it is served. When every segment is present, `finish()` checks the whole blob
/// against the record (size, SHA-256) and publishes it into `cache/` exactly as a download does:
/// the same bytes, the same header epoch, the same row.
public final class SparseContent {
    /// The content record this partial is of (bound to the file by the codec).
    public let record: ContentRecord
    /// The download row that keeps the partial across runs (`removeInterruptedWrites` keeps it).
    public let transferId: Int64
    let store: BlobStore
    let epochs: EpochKeys
    let path: String
    private var fd: Int32
    private var map: SparseSegmentMap?
    private var verifier: SealedSegmentVerifier?
    private var reader: SealedBlobReader?

    /// The sealed size of the content (the remote blob's, without padding).
    public var sealedSize: UInt64 { UInt64(record.sealedSize) }
    /// Whether the header is here (the geometry is known).
    public var hasHeader: Bool { verifier != nil }
    /// Segments in the blob (nil before the header).
    public var segmentCount: Int? { verifier?.segmentCount }
    /// Segments present (authenticated and durable).
    public var presentCount: Int { map?.presentCount ?? 0 }
    /// Whether every segment is present.
    public var isComplete: Bool { map.map { $0.presentCount == $0.count } ?? false }

    init(store: BlobStore, epochs: EpochKeys, record: ContentRecord, transferId: Int64) throws {
        guard record.sealedSize > 0, let idBytes = Hex.decode(record.blob), idBytes.count == 16 else {
            throw VaultError(.integrity, "a content record names an invalid blob")
        }
        self.store = store; self.epochs = epochs; self.record = record; self.transferId = transferId
        path = store.layout.tempDirectory + "/" + record.blob + ".sparse"
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: path) }
        self.fd = fd
        _ = flock(fd, LOCK_SH | LOCK_NB)   // in use while open: the content budget of any process leaves it (`Vault.partialItems`)
        var st = stat()
        fstat(fd, &st)
        if UInt64(max(0, st.st_size)) != sealedSize {
            SparseSegmentMap.remove(for: path)
            guard ftruncate(fd, off_t(sealedSize)) == 0 else { throw POSIX.mapWriteError(errno, path: path) }
        } else if let kept = try? SparseSegmentMap(opening: path, blobId: idBytes, sealedSize: sealedSize) {
            // The header is present whenever the map exists (it is written after the header).
            if let header = try? readSealed(0..<UInt64(SealedBlobHeader.size)), (try? useHeader(header, idBytes)) != nil,
               kept.segmentSize == verifier?.segmentSize, kept.count == verifier?.segmentCount {
                map = kept
            } else {
                verifier = nil
                SparseSegmentMap.remove(for: path)
            }
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    private func useHeader(_ header: [UInt8], _ idBytes: [UInt8]) throws {
        verifier = try SealedSegmentVerifier(headerBytes: header, sealedSize: sealedSize, wrapKeyForEpoch: epochs.blobWrapKey(epoch:),
                                             expectedVaultId: epochs.current.vaultId, expectedBlobId: idBytes)
    }

    /// Checks the fetched header (bytes 0..<112) and keeps it: the geometry is then known.
    public func storeHeader(_ bytes: [UInt8]) throws {
        guard map == nil else { return }
        do { try useHeader(bytes, Hex.decode(record.blob) ?? []) } catch { throw SealedDownload.lie(error) }
        try writeDurably(bytes, at: 0)
        map = try SparseSegmentMap(creating: path, blobId: Hex.decode(record.blob) ?? [], sealedSize: sealedSize,
                                   segmentSize: verifier!.segmentSize, count: verifier!.segmentCount)
    }

    /// The segments that plaintext bytes `[offset, offset + count)` need (header required).
    public func segments(plaintextOffset offset: UInt64, count: Int) -> ClosedRange<Int>? {
        verifier?.segments(plaintextOffset: offset, count: count)
    }

    /// The sealed byte range of segments `run` (header required).
    public func ciphertextRange(of run: ClosedRange<Int>) -> Range<UInt64>? {
        guard let v = verifier else { return nil }
        return v.ciphertextRange(of: run.lowerBound).lowerBound..<v.ciphertextRange(of: run.upperBound).upperBound
    }

    /// The runs of consecutive segments in `wanted` that are not present yet.
    public func missingRuns(in wanted: ClosedRange<Int>) -> [ClosedRange<Int>] {
        guard let map else { return [wanted] }
        var runs: [ClosedRange<Int>] = []
        var start: Int?
        for i in wanted {
            if map.isPresent(i) {
                if let s = start { runs.append(s...(i - 1)); start = nil }
            } else if start == nil { start = i }
        }
        if let s = start { runs.append(s...wanted.upperBound) }
        return runs
    }

    /// Stores the fetched sealed bytes of segments `run` (exactly their range): each segment is
    /// authenticated before anything is written; the bytes are made durable, then marked present.
    /// A segment that does not open is an integrity error and nothing of the run is kept.
    public func storeSegments(_ run: ClosedRange<Int>, sealed bytes: [UInt8]) throws {
        guard let v = verifier, let map, let range = ciphertextRange(of: run), UInt64(bytes.count) == UInt64(range.count) else {
            throw VaultError(.integrity, "the server's answer does not fit the segments it was asked for")
        }
        try bytes.withUnsafeBytes { all in
            var at = 0
            for i in run {
                let n = Int(v.ciphertextRange(of: i).count)
                do { try v.verify(index: i, sealed: UnsafeRawBufferPointer(rebasing: all[at..<at + n])) } catch { throw SealedDownload.lie(error) }
                at += n
            }
        }
        try writeDurably(bytes, at: range.lowerBound)
        try map.mark(run, present: true)
        TestHooks.crashPoint("sparse-after-segments")
    }

    /// Authenticated plaintext from `offset` into `buffer` (as much as fits, clamped to the
    /// content; returns how many bytes); every segment it touches must be present (`missingRuns`
    /// empty). Throws `.integrity` for a segment that does not open, leaving `buffer` zeroed.
    public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if reader == nil {
            do {
                reader = try SealedBlobReader(fileDescriptor: fd, fileSize: sealedSize, wrapKeyForEpoch: epochs.blobWrapKey(epoch:),
                                              expectedVaultId: epochs.current.vaultId, expectedBlobId: Hex.decode(record.blob) ?? [])
            } catch { throw BlobStore.mapCrypto(error, blob: record.blob) }
        }
        do { return try reader!.read(offset: offset, into: buffer) } catch { throw BlobStore.mapCrypto(error, blob: record.blob) }
    }

    /// Authenticates again each present segment of `run` as it is in the partial and marks those
    /// that fail missing (damaged at rest), so the next fetch replaces them. Returns how many.
    @discardableResult
    public func forgetDamaged(in run: ClosedRange<Int>) throws -> Int {
        guard let v = verifier, let map else { return 0 }
        var damaged = 0
        for i in run where map.isPresent(i) {
            let sealed = try readSealed(v.ciphertextRange(of: i))
            if (try? sealed.withUnsafeBytes { try v.verify(index: i, sealed: $0) }) == nil {
                try map.mark(i...i, present: false)
                damaged += 1
            }
        }
        return damaged
    }

    /// Checks the complete blob against the record (every segment, size, SHA-256), rewraps an old
    /// epoch's header to the current one, and publishes it into `cache/` (fsync, rename, fsync of
    /// the folder). The map is removed. Returns the blob's row, to record with the node.
    func finish() throws -> BlobRecord {
        guard isComplete, let v = verifier else { throw VaultError(.internalError, "the sparse content of \(record.blob) is not complete") }
        let hasher = PipelinedHasher()
        var total: UInt64 = 0
        let whole = try SealedBlobReader(fileDescriptor: fd, fileSize: sealedSize, wrapKeyForEpoch: epochs.blobWrapKey(epoch:),
                                         expectedVaultId: epochs.current.vaultId, expectedBlobId: Hex.decode(record.blob) ?? [])
        do { try whole.stream { total += UInt64($0.count); hasher.update($0) } } catch { throw SealedDownload.lie(error) }
        try SealedDownload.check(plaintextSize: total, digest: hasher.finalize(), against: record)
        try store.rewrapToCurrentEpoch(fd: fd, path: path, blobId: record.blob, from: v.keyEpoch)
        reader = nil
        let f = fd
        fd = -1
        try store.publish(fd: f, tmp: path, id: record.blob, area: .cache, durable: true)
        SparseSegmentMap.remove(for: path)
        return BlobRecord(id: record.blob, area: .cache, size: total, sealedSize: sealedSize, sha256: record.sha256.lowercased(),
                          keyEpoch: epochs.current.epoch)
    }

    /// Drops the partial and its map (content that changed, a damaged partial).
    public func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        unlink(path)
        SparseSegmentMap.remove(for: path)
    }

    private func readSealed(_ range: Range<UInt64>) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(range.count))
        let n = try out.withUnsafeMutableBytes { try POSIXIO.readFully(fd, into: $0, at: Int64(range.lowerBound)) }
        guard n == out.count else { throw VaultError(.io, "the sparse partial \(record.blob) is shorter than its content") }
        return out
    }

    private func writeDurably(_ bytes: [UInt8], at offset: UInt64) throws {
        try writeAll(fd, bytes, at: offset, path: path)
        guard fdatasync(fd) == 0 else { throw POSIX.mapWriteError(errno, path: path) }
    }
}

/// `tmp/<blobId>.segments`, the record of which segments a sparse partial holds (SECURITY.md
/// "Sparse partial downloads"). All integers big-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic ASCII `VAULTSPM` |
/// | 8 | 1 | version = 1 |
/// | 9 | 3 | reserved, 0 |
/// | 12 | 4 | segment size S (the header's) |
/// | 16 | 8 | sealed size Z (the content record's) |
/// | 24 | 16 | blob id |
/// | 40 | N | one byte per segment i (N = segment count): 1 present, 0 not |
///
/// It is created (write, fsync, rename) only after the header is durable in the partial; a state
/// byte is set only after its segment authenticated and was made durable (`fdatasync`). A byte
/// lost to a crash only means the segment is fetched again; a present byte never names bytes
/// that did not authenticate, and every read authenticates them again.
final class SparseSegmentMap {
    static let magic: [UInt8] = Array("VAULTSPM".utf8)
    static let headerSize = 40
    let path: String
    let segmentSize: Int
    let count: Int
    private var present: [UInt8]
    private(set) var presentCount: Int
    private let fd: Int32

    static func mapPath(for sparse: String) -> String { String(sparse.dropLast(".sparse".count)) + ".segments" }
    static func remove(for sparse: String) { unlink(mapPath(for: sparse)) }

    /// Creates the map of a partial whose header was just stored (nothing present yet).
    init(creating sparse: String, blobId: [UInt8], sealedSize: UInt64, segmentSize: Int, count: Int) throws {
        path = Self.mapPath(for: sparse)
        var bytes = Self.magic + [1, 0, 0, 0]
        bytes += bigEndian(UInt64(segmentSize), 4) + bigEndian(sealedSize, 8) + blobId
        bytes += [UInt8](repeating: 0, count: count)
        try POSIX.writeAtomically(bytes, to: path)
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: path) }
        self.fd = fd; self.segmentSize = segmentSize; self.count = count
        present = [UInt8](repeating: 0, count: count); presentCount = 0
    }

    /// Opens the map of an existing partial; throws when it is not this blob's or is damaged
    /// (the caller then starts the partial over).
    init(opening sparse: String, blobId: [UInt8], sealedSize: UInt64) throws {
        path = Self.mapPath(for: sparse)
        let bytes = try POSIX.readFile(path)
        guard bytes.count >= Self.headerSize, Array(bytes[0..<8]) == Self.magic, bytes[8] == 1,
              Array(bytes[16..<24]) == bigEndian(sealedSize, 8), Array(bytes[24..<40]) == blobId,
              bytes[Self.headerSize...].allSatisfy({ $0 <= 1 }) else {
            throw VaultError(.integrity, "the segment map \(path) is not this partial's")
        }
        segmentSize = Int(bytes[12..<16].reduce(0) { $0 << 8 | UInt64($1) })
        count = bytes.count - Self.headerSize
        present = Array(bytes[Self.headerSize...])
        presentCount = present.reduce(0) { $0 + Int($1) }
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: path) }
        self.fd = fd
        _ = flock(fd, LOCK_SH | LOCK_NB)   // in use while open: the content budget of any process leaves it (`Vault.partialItems`)
    }

    deinit { close(fd) }

    func isPresent(_ i: Int) -> Bool { i >= 0 && i < count && present[i] == 1 }

    /// Marks segments `run` present or missing (one pwrite of their state bytes).
    func mark(_ run: ClosedRange<Int>, present value: Bool) throws {
        let state: UInt8 = value ? 1 : 0
        try writeAll(fd, [UInt8](repeating: state, count: run.count), at: UInt64(Self.headerSize + run.lowerBound), path: path)
        for i in run where present[i] != state { present[i] = state; presentCount += value ? 1 : -1 }
    }
}

/// `pwrite` of all of `bytes` at `offset`; a failure is the write error of `path`.
private func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64, path: String) throws {
    let result: Result<Void, Errno> = bytes.withUnsafeBytes { buf in
        do throws(Errno) { try POSIXIO.writeAll(fd, buf, at: Int64(offset)); return .success(()) } catch { return .failure(error) }
    }
    if case .failure(let e) = result { throw POSIX.mapWriteError(e.rawValue, path: path) }
}

private func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
    (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
}

extension Vault {
    /// Opens (or resumes) the sparse partial of the remote content `record` of file `nodeId`
    /// (see `SparseContent`): its download row is the node's unfinished one when that names the
    /// same blob, else a new one, so the partial survives `doctor` and the next run reuses the
    /// segments it holds.
    public func sparseContent(_ record: ContentRecord, nodeId: String) throws -> SparseContent {
        let transfer: Int64
        if let row = try unfinishedDownload(nodeId: nodeId, total: record.size), row.blobId == record.blob {
            transfer = row.id
        } else {
            transfer = try addTransfer(.download, nodeId: nodeId, state: .paused, blobId: record.blob, total: record.size)
        }
        return try SparseContent(store: blobs, epochs: epochs, record: record, transferId: transfer)
    }

    /// The sparse partial of file `nodeId`'s content `record` kept from an earlier run, opened
    /// without the server (offline: the segments it holds are served); nil when none is here.
    public func keptSparseContent(_ record: ContentRecord, nodeId: String) throws -> SparseContent? {
        guard let row = try unfinishedDownload(nodeId: nodeId, total: record.size), row.blobId == record.blob,
              POSIX.exists(layout.tempDirectory + "/" + record.blob + ".sparse") else { return nil }
        return try SparseContent(store: blobs, epochs: epochs, record: record, transferId: row.id)
    }

    /// Publishes a complete sparse partial as file `nodeId`'s cached content (as a download does:
    /// `publishDownloaded`, then the content budget, never evicting the nodes in `keeping`).
    /// Returns the node as it now is, or nil when it changed meanwhile (the blob is dropped).
    public func publishSparse(_ content: SparseContent, nodeId: String, keeping: Set<String>) throws -> Node? {
        let blob = try content.finish()
        let published: Node?
        do { published = try publishDownloaded(blob, nodeId: nodeId, transfer: content.transferId) } catch {
            blobs.delete(blob.id, area: .cache)
            throw error
        }
        _ = try? applyBudget(keeping: keeping.union([nodeId]))
        return published
    }
}
