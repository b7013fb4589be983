import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Content of a remote file arriving (SECURITY.md "End to end", content record rules 2–5): the
/// sealed bytes `[0, sealedSize)` go into `tmp/<blobId>.partial` exactly as the server sends
/// them, and each is authenticated as it arrives (`SealedStreamVerifier`: the vault's id, the
/// record's blob id, the wrap key of the header's epoch). A partial left by an interrupted run
/// is re-verified before the download continues after it. `finish()` publishes the blob into
/// `cache/` under the record's blob id only when every segment opened and the plaintext has the
/// record's size and SHA-256; any failure is an integrity error and the caller `discard()`s.
public final class SealedDownload {
    public let blobId: String
    public let sealedSize: UInt64
    let record: ContentRecord
    let store: BlobStore
    let epochs: EpochKeys
    let path: String
    private var fd: Int32
    private var verifier: SealedStreamVerifier
    private let sink: BufferedSink
    /// The plaintext's SHA-256, on a second core (the receiving thread only authenticates).
    private let hashing: HasherBox
    /// Sealed bytes in the partial so far (the download continues from here).
    public private(set) var received: UInt64 = 0

    init(store: BlobStore, epochs: EpochKeys, record: ContentRecord) throws {
        guard record.sealedSize > 0, let idBytes = Hex.decode(record.blob), idBytes.count == 16 else {
            throw VaultError(.integrity, "a content record names an invalid blob")
        }
        self.blobId = record.blob; self.sealedSize = UInt64(record.sealedSize); self.record = record; self.store = store
        self.epochs = epochs
        path = store.layout.tempDirectory + "/" + record.blob + ".partial"
        let hashing = HasherBox()
        let make = {
            try SealedStreamVerifier(expectedLength: UInt64(record.sealedSize), expectedVaultId: epochs.current.vaultId,
                                     expectedBlobId: idBytes, wrapKey: epochs.blobWrapKey(epoch:),
                                     plaintextSink: { hashing.hasher.update($0) })
        }
        self.hashing = hashing
        var v: SealedStreamVerifier
        do { v = try make() } catch { throw Self.lie(error) }
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: path) }
        var st = stat()
        fstat(fd, &st)
        let kept = UInt64(max(0, st.st_size))
        var resumed: UInt64 = 0
        if kept > 0 && kept <= UInt64(record.sealedSize) && (try? Self.reverify(fd: fd, verifier: v, kept: kept, id: record.blob)) != nil {
            resumed = kept
        } else {
            if kept > 0 {   // the reverification fed the hasher: start both again
                hashing.hasher = PipelinedHasher(bufferSize: 256 << 10)
                v = try make()
            }
            _ = ftruncate(fd, 0)
        }
        _ = lseek(fd, off_t(resumed), SEEK_SET)
        self.fd = fd
        verifier = v
        received = resumed
        // Pieces of 256 KiB or more (libcurl hands up to 512 KiB) are written as they come.
        sink = BufferedSink(fd: fd, path: path, capacity: 256 << 10, alreadyWritten: resumed)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Feeds the kept prefix of an interrupted download through the verifier (every whole
    /// segment must open again; the bytes of a segment cut off stay pending until the rest arrives).
    private static func reverify(fd: Int32, verifier: SealedStreamVerifier, kept: UInt64, id blobId: String) throws {
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(max(1, min(1 << 20, kept))), alignment: 16)
        defer { buf.deallocate() }
        var offset: UInt64 = 0
        while offset < kept {
            let want = UnsafeMutableRawBufferPointer(rebasing: buf[0..<Int(min(UInt64(buf.count), kept - offset))])
            let n: Int
            do { n = try POSIXIO.readFully(fd, into: want, at: Int64(offset)) } catch {
                throw VaultError(.io, "cannot read the partial download \(blobId): \(error)")
            }
            guard n > 0 else { throw VaultError(.io, "cannot read the partial download \(blobId): it ended early") }
            try verifier.feed(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            offset += UInt64(n)
        }
    }

    /// Appends the next sealed bytes (authenticated as whole segments complete).
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        do { try verifier.feed(bytes) } catch { throw Self.lie(error) }
        try sink.write(bytes)
        received += UInt64(bytes.count)
    }

    /// Bytes written to the partial file so far (for progress that survives a kill).
    public var written: UInt64 { sink.total - UInt64(sink.used) }

    /// Writes what is buffered, so an interruption keeps it for the next run.
    public func flush() throws { try sink.flush() }

    /// Checks the whole blob against the record and publishes it into `cache/` (fsync, rename,
    /// fsync of the folder). Returns its row, to record in the same transaction as the node.
    public func finish() throws -> BlobRecord {
        let result: (plaintextSize: UInt64, sha256: [UInt8])
        do { result = try verifier.finish() } catch { throw Self.lie(error) }
        try Self.check(plaintextSize: result.plaintextSize, digest: hashing.hasher.finalize(), against: record)
        try sink.flush()
        try store.rewrapToCurrentEpoch(fd: fd, path: path, blobId: blobId, from: verifier.keyEpoch)
        let f = fd
        fd = -1   // publish closes it
        try store.publish(fd: f, tmp: path, id: blobId, area: .cache, durable: true)
        return BlobRecord(id: blobId, area: .cache, size: result.plaintextSize, sealedSize: sealedSize, sha256: record.sha256.lowercased(),
                          keyEpoch: epochs.current.epoch)
    }

    /// Drops the partial (a mismatch, a lie, a disk that filled up).
    public func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        unlink(path)
    }

    /// Whole content that arrived must be the record's: its plaintext size and SHA-256 (an
    /// integrity error otherwise, as `lie` words it).
    static func check(plaintextSize: UInt64, digest: [UInt8], against record: ContentRecord) throws {
        let hex = Hex.encode(digest)
        guard plaintextSize == UInt64(record.size), hex == record.sha256.lowercased() else {
            throw lie(CryptoError.invalidFormat("its plaintext (\(plaintextSize) bytes, SHA-256 \(hex)) is not the record's (\(record.size) bytes, \(record.sha256))"))
        }
    }

    static func lie(_ error: Error) -> Error {
        if let e = error as? VaultError { return e }
        let detail: String
        switch error as? CryptoError {
        case .authenticationFailed(let m)?, .invalidFormat(let m)?: detail = m
        default: detail = "\(error)"
        }
        return VaultError(.integrity, "the server's content failed its integrity check: \(detail)",
                          hint: "nothing was kept on this device; the server (or something between it and this device) is faulty or malicious")
    }
}

/// The hasher a verifier feeds (replaced when a kept partial is discarded).
final class HasherBox { var hasher = PipelinedHasher(bufferSize: 256 << 10) }

extension Vault {
    /// Starts (or resumes) the download of the content `record` describes (see `SealedDownload`).
    public func sealedDownload(_ record: ContentRecord) throws -> SealedDownload {
        try SealedDownload(store: blobs, epochs: epochs, record: record)
    }
}
