import Foundation
import VaultCrypto
import VaultPrimitives

/// The read path (SECURITY.md "Reading"): a file's content is released only as authenticated
/// plaintext, from a blob whose plaintext size is the node's recorded size; a whole read also
/// opens the final segment and matches the node's SHA-256 before it reports success.
extension Vault {
    /// Opens a file's sealed content for reading and records the access (for LRU eviction, best
    /// effort: a full or read-only disk does not stop a read). Throws `.integrity` when the blob
    /// would hold another number of bytes than the node records (a truncated or extended blob),
    /// before any plaintext is released.
    public func openContent(_ n: Node) throws -> BlobHandle {
        guard !n.isFolder else { throw VaultError(.usage, "\(try path(of: n)) is a folder") }
        guard n.contentState == .local || n.contentState == .stale, let blobId = n.localPath else {
            throw VaultError(.notLocal, "the content of \(try path(of: n)) is not on this device (\(n.contentState.rawValue))",
                             hint: isReadOnly ? "the vault is on a read-only filesystem, where nothing can be downloaded; remount it read-write, then `vault get` or `vault pin` downloads it"
                                              : "connect to the server and run `vault get` or `vault pin` to download it")
        }
        let handle = try openBlob(blobId).handle   // either area: a publish may have stopped between its steps
        let expected = try localContent(of: n)
        guard handle.plaintextSize == expected.size else {
            throw Self.contentMismatch(blobId, path: (try? path(of: n)) ?? n.id,
                                       "it holds \(handle.plaintextSize) bytes of plaintext where the file has \(expected.size)")
        }
        recordAccess(n.id)
        return handle
    }

    /// Streams the whole content of file `n` to `body`, in pieces as each segment authenticates,
    /// then checks that exactly the node's size arrived with the node's SHA-256 (hashed on a second
    /// core, overlapped with the reading). Only when it returns has `body` seen the file's true content: a caller that publishes
    /// (`get`) must publish after it; one that cannot take bytes back (`cat`) must say that what it
    /// passed on is not trustworthy when it throws `.integrity`. Returns the byte count.
    /// With `checksum: false` only the length is checked: every byte is still authenticated by its
    /// segment's tag and the blob is bound to its id, so the SHA-256 (which halves the read speed)
    /// guards only against the database naming the wrong content, which its own MAC already rules out.
    @discardableResult
    public func readContent(_ n: Node, checksum: Bool = true, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt64 {
        try readWhole(try openContent(n), of: n, checksum: checksum, body)
    }

    /// Reads all of `handle` (every segment, the final one included) into `body` and checks it
    /// against node `n`'s size and SHA-256 (`doctor --verify` and `readContent`).
    @discardableResult
    func readWhole(_ handle: BlobHandle, of n: Node, checksum: Bool = true, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt64 {
        let hasher = checksum ? PipelinedHasher() : nil   // hashes on a second core, overlapped with decryption and `body`
        var total: UInt64 = 0
        try handle.stream { piece in
            total += UInt64(piece.count)
            hasher?.update(piece)
            try body(piece)
        }
        let shown = (try? path(of: n)) ?? n.id
        let local = try localContent(of: n)
        guard total == local.size else {
            throw Self.contentMismatch(handle.id, path: shown, "it gave \(total) bytes of plaintext where the file has \(local.size)")
        }
        if let hasher, let expected = local.sha256 {
            let digest = Hex.encode(hasher.finalize())
            guard constantTimeEqual(Array(digest.utf8), Array(expected.lowercased().utf8)) else {
                throw Self.contentMismatch(handle.id, path: shown, "its plaintext's SHA-256 is \(digest) where the file's is \(expected)")
            }
        }
        return total
    }

    /// The size and SHA-256 the content this device holds for `n` must have: the node's own, or,
    /// for an older version kept while the server has a newer one (STALE), its blob's record.
    func localContent(of n: Node) throws -> (size: UInt64, sha256: String?) {
        guard n.contentState == .stale, let blob = n.localPath,
              let b = try blobsTable.record(id: blob) else { return (n.size, n.sha256) }
        return (b.size, b.sha256)
    }

    /// Records that node `id` was just read (LRU order). Best effort: a read never fails because
    /// this small write could not be made (full disk, read-only filesystem).
    func recordAccess(_ id: String, now: Int64 = Vault.now) {
        guard !isReadOnly else { return }
        try? nodesTable.setLastAccessed(id: id, now)
    }

    static func contentMismatch(_ blobId: String, path: String, _ detail: String) -> VaultError {
        VaultError(.integrity, "content blob \(blobId) of \(path) is damaged or was tampered with: \(detail)",
                   hint: "run `vault doctor`; the content can be downloaded again if it was synced")
    }
}
