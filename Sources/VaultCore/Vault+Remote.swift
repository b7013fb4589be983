import Foundation
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// What the sync layer needs to send a node end to end: its sequence numbers, and the sealed
/// bytes of a blob exactly as they are on disk (read raw, never decrypted: the upload sends them
/// as they are) with their SHA-256.
extension Vault {
    /// The sequence numbers recorded for local node `nodeId` (zeros when it has none).
    public func remoteSeqs(nodeId: String) throws -> RemoteSeqs {
        try nodesTable.seqs(id: nodeId) ?? RemoteSeqs()
    }

    /// Raises the sequence numbers recorded for `nodeId` to `seqs` (never lowers them).
    public func noteRemoteSeqs(nodeId: String, _ seqs: RemoteSeqs) throws {
        try nodesTable.raiseSeqs(id: nodeId, seqs)
    }

    /// The sequence numbers the next records of server node `remoteId` (local node `nodeId`, when
    /// it is still in the tree) take: one more than the highest this device sealed or saw for it,
    /// wherever that is kept (the node, its base, or the floor that outlives both), so a record
    /// never goes below one another device has seen, whatever left and re-entered the tree
    /// between. They are claimed here, in the floor, before anything is sent: a record sealed and
    /// lost on the way is never followed by another of the same number.
    public func claimSeqs(remoteId: String, nodeId: String?) throws -> RemoteSeqs {
        try db.transaction {
            let high = try highestSeqs(remoteId: remoteId, nodeId: nodeId)
            let next = RemoteSeqs(record: high.record + 1, content: high.content + 1)
            try raiseSeqFloor(remoteId: remoteId, to: next)
            return next
        }
    }

    /// The highest sequence numbers known for `remoteId` (and local node `nodeId`): sealed here
    /// or seen, on the node, its base, or the floor.
    func highestSeqs(remoteId: String, nodeId: String?) throws -> RemoteSeqs {
        try SeqFloorTable(db: db).highest(remoteId: remoteId, nodeId: nodeId)
    }

    /// Raises the floor of `remoteId` to `seqs` (never lowers it).
    func raiseSeqFloor(remoteId: String, to seqs: RemoteSeqs) throws {
        guard seqs.record > 0 || seqs.content > 0 else { return }
        try SeqFloorTable(db: db).raise(remoteId: remoteId, to: seqs)
    }

    /// Keeps what node `nodeId` and the base of `remoteId` say this device has seen in the floor,
    /// before the node's row or the base goes (the node leaves this device's tree).
    func retireSeqs(remoteId: String?, nodeId: String?) throws {
        guard let remoteId else { return }
        try raiseSeqFloor(remoteId: remoteId, to: try highestSeqs(remoteId: remoteId, nodeId: nodeId))
    }

    /// The stored row of blob `id`, if any.
    public func blobRecord(_ id: String) throws -> BlobRecord? {
        try blobsTable.record(id: id)
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
    /// when the blob was written; when that is unknown (a small blob, which keeps none: see
    /// `BlobRecord.sealedDigestFloor`; an older blob, a download, a header a rotation rewrote) it
    /// is computed from the file, and recorded for a blob above the floor.
    public func uploadSHA256(ofBlob id: String, length: UInt64) throws -> String {
        let file = try openSealedBytes(id)
        guard length >= file.size else { throw VaultError(.internalError, "an upload shorter than the sealed blob \(id)") }
        if length == file.size, let known = try blobsTable.sealedSHA256(id: id) { return known }
        var hasher = SHA256Hasher()
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(max(1, min(1 << 20, length))), alignment: 16)
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
        if length == offset && !isReadOnly && BlobRecord.keepsSealedDigest(sealedSize: file.size) {
            try blobsTable.setSealedSHA256(id: id, digest)
        }
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
