import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The highest node-record and content-record sequence numbers this device wrote or saw for a
/// node (SECURITY.md "End to end"): the next record it writes takes one more, and a record the
/// server serves with a lower one is a rollback.
public struct RemoteSeqs: Sendable, Equatable {
    public var record: Int64
    public var content: Int64
    public init(record: Int64 = 0, content: Int64 = 0) { self.record = record; self.content = content }
}

/// What the sync layer needs to send a node end to end: its sequence numbers, and the sealed
/// bytes of a blob exactly as they are on disk (read raw, never decrypted: the upload sends them
/// as they are) with their SHA-256.
extension Vault {
    /// The sequence numbers recorded for local node `nodeId` (zeros when it has none).
    public func remoteSeqs(nodeId: String) throws -> RemoteSeqs {
        guard let r = try db.queryOne("SELECT record_seq, content_seq FROM nodes WHERE id = ?", [nodeId]) else { return RemoteSeqs() }
        return RemoteSeqs(record: r[0].int64 ?? 0, content: r[1].int64 ?? 0)
    }

    /// Raises the sequence numbers recorded for `nodeId` to `seqs` (never lowers them).
    public func noteRemoteSeqs(nodeId: String, _ seqs: RemoteSeqs) throws {
        try db.run("UPDATE nodes SET record_seq = max(record_seq, ?), content_seq = max(content_seq, ?) WHERE id = ?",
                   [seqs.record, seqs.content, nodeId])
    }

    /// The stored row of blob `id`, if any.
    public func blobRecord(_ id: String) throws -> BlobRecord? {
        try db.queryOne("SELECT id, area, size, sealed_size, sha256, key_epoch, sealed_sha256 FROM blobs WHERE id = ?", [id]).map {
            BlobRecord(id: $0[0].string ?? id, area: BlobArea(rawValue: $0[1].string ?? "") ?? .cache, size: UInt64(max(0, $0[2].int64 ?? 0)),
                       sealedSize: UInt64(max(0, $0[3].int64 ?? 0)), sha256: $0[4].string ?? "", keyEpoch: UInt32($0[5].int64 ?? 0),
                       sealedSHA256: $0[6].string)
        }
    }

    /// Opens blob `id`'s sealed bytes for raw reads (an upload sends them as they are), after
    /// its header passed the readers' rule (`openBlob`): a copy from before a key rotation is
    /// never sent as current content.
    public func openSealedBytes(_ id: String) throws -> SealedBytes {
        let (_, area) = try openBlob(id)
        return try SealedBytes(path: blobs.path(id: id, area: area), id: id)
    }

    /// The SHA-256 (hex) of what an upload of blob `id` sends: its sealed bytes followed by
    /// `length − sealed size` zero bytes of padding. Without padding it is the digest recorded
    /// when the blob was written; when that is unknown (an older blob, a download, a header a
    /// rotation rewrote) it is computed from the file once and recorded.
    public func uploadSHA256(ofBlob id: String, length: UInt64) throws -> String {
        let file = try openSealedBytes(id)
        guard length >= file.size else { throw VaultError(.internalError, "an upload shorter than the sealed blob \(id)") }
        if length == file.size, let known = try db.scalar("SELECT sealed_sha256 FROM blobs WHERE id = ?", [id])?.string { return known }
        var hasher = SHA256Hasher()
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buf.deallocate() }
        var offset: UInt64 = 0
        while offset < file.size {
            let n = try file.read(offset: offset, into: UnsafeMutableRawBufferPointer(rebasing: buf[0..<Int(min(UInt64(buf.count), file.size - offset))]))
            guard n > 0 else { throw VaultError(.io, "blob \(id) became shorter while it was read") }
            hasher.update(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            offset += UInt64(n)
        }
        // Padding: zero bytes up to `length` (a padded upload's digest is not recorded).
        var left = length - offset
        if left > 0 { memset(buf.baseAddress!, 0, buf.count) }
        while left > 0 {
            let n = Int(min(UInt64(buf.count), left))
            hasher.update(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            left -= UInt64(n)
        }
        let digest = Hex.encode(hasher.finalize())
        if length == offset && !isReadOnly { try db.run("UPDATE blobs SET sealed_sha256 = ? WHERE id = ?", [digest, id]) }
        return digest
    }
}

/// A blob's sealed bytes, read raw with `pread` (no decryption: what goes to the server as is).
public final class SealedBytes {
    let fd: Int32
    public let id: String
    /// Bytes on disk.
    public let size: UInt64

    init(path: String, id: String) throws {
        let fd: Int32
        do { fd = try POSIXIO.open(path, O_RDONLY) } catch {
            if error == .noEntry { throw VaultError(.integrity, "content blob \(id) is missing from disk", hint: "run `vault doctor`") }
            throw VaultError(.io, "cannot open blob \(id): \(error)")
        }
        var st = stat()
        fstat(fd, &st)
        self.fd = fd; self.id = id; self.size = UInt64(st.st_size)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
    }

    deinit { close(fd) }

    /// Fills `buffer` from `offset` (short only at the end of the file); returns the bytes read.
    public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do { return try POSIXIO.readFully(fd, into: buffer, at: Int64(offset)) } catch {
            throw VaultError(.io, "cannot read blob \(id): \(error)")
        }
    }
}
