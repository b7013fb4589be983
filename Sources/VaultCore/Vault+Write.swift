import Foundation
import VaultPrimitives

/// Writing a file's content from memory (`vault mount`): the same sealed staging blob and the
/// same publish step as `put`, so the outbox and the sync layer see no difference.
extension Vault {
    /// The child `name` of folder `parentId`, if any (names compare byte for byte).
    public func child(ofFolder parentId: String, named name: String) throws -> Node? {
        try child(of: parentId, named: name)
    }

    /// The size of the content this device holds for file `n`: the node's size, or for an older
    /// version kept while the server has a newer one (STALE), that version's (what a read gives).
    public func localSize(of n: Node) throws -> UInt64 {
        try localContent(of: n).size
    }

    /// Creates file `name` in folder `parentId` with the bytes `produce` emits (sealed as they
    /// come), awaiting upload.
    /// - Throws: `.notFound` (no such folder), `.conflict` (it is a file), `.invalidName`,
    ///   `.alreadyExists`, `.noSpace` (nothing changed).
    @discardableResult
    public func createFile(in parentId: String, named name: String, size: UInt64,
                           _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Node {
        guard let parent = try node(id: parentId) else { throw VaultError(.notFound, "no such folder (it was removed)") }
        guard parent.isFolder else { throw VaultError(.conflict, "\(try path(of: parent)) is a file, not a folder") }
        try NameRules.validate(name)
        try requireFree(name, in: parent)
        let blob = try seal(size: size, doing: "store \(DisplayText.escaped(name))", produce)
        return try publishFile(blob, in: parent, named: name, replacing: nil)
    }

    /// Stores the bytes `produce` emits as the new version of file `nodeId` (the previous
    /// content is kept as a revision, as `put --replace` does), awaiting upload. `keepPrevious`
    /// false: the previous content is scratch (the empty first version of a file just created)
    /// and is dropped rather than kept, when it never left this device.
    /// - Throws: `.notFound` (the file was removed), `.usage` (it is a folder), `.noSpace`.
    @discardableResult
    public func replaceContent(of nodeId: String, size: UInt64, keepPrevious: Bool = true,
                               _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Node {
        guard let n = try node(id: nodeId), let parentId = n.parentId, let parent = try node(id: parentId) else {
            throw VaultError(.notFound, "the file was removed from the vault")
        }
        guard !n.isFolder else { throw VaultError(.usage, "\(try path(of: n)) is a folder") }
        let blob = try seal(size: size, doing: "store \(DisplayText.escaped(n.name))", produce)
        return try publishFile(blob, in: parent, named: n.name, replacing: n, keepPrevious: keepPrevious)
    }

    /// A new content blob sealed a piece at a time across calls (the mount's sequential writes),
    /// for `replaceContent(of:streamed:)`. It needs no key of the vault after this.
    /// It has no name in the vault's folder until it is published, so no command can remove it,
    /// and a killed process leaves nothing of it.
    /// The digest of its sealed bytes is left to the upload (one hash fewer while it is written).
    public func beginContent() throws -> BlobStream { try blobs.beginStream(unnamed: true, sealedDigest: false) }

    /// As `replaceContent(of:size:keepPrevious:_:)`, with the content already sealed into
    /// `stream` (which is spent). A stream begun before a key rotation (`isCurrent` false) is
    /// `.conflict`, changing nothing: read it back (`reopen`) and store it through the other form.
    @discardableResult
    public func replaceContent(of nodeId: String, streamed stream: BlobStream, keepPrevious: Bool = true) throws -> Node {
        guard let n = try node(id: nodeId), let parentId = n.parentId, let parent = try node(id: parentId) else {
            throw VaultError(.notFound, "the file was removed from the vault")
        }
        guard !n.isFolder else { throw VaultError(.usage, "\(try path(of: n)) is a folder") }
        let blob = try blobs.publish(stream, area: .staging)
        return try publishFile(blob, in: parent, named: n.name, replacing: n, keepPrevious: keepPrevious)
    }

    /// True when `stream` was begun under the vault's current key epoch (no rotation since),
    /// so `replaceContent(of:streamed:)` can publish it as it is.
    public func isCurrent(_ stream: BlobStream) -> Bool { stream.keyEpoch == keys.epoch }

    /// What `stream` holds so far, as an authenticated reader (the stream takes no more).
    public func reopen(_ stream: BlobStream) throws -> BlobHandle { try blobs.reopen(stream) }

    /// Throws `.noSpace` unless `plaintextBytes` more, sealed, fit on the vault's disk with the reserve.
    public func requireFreeSpace(forSealing plaintextBytes: UInt64, doing what: String) throws {
        try blobs.checkFreeSpace(for: BlobStore.sealedSize(plaintextSize: plaintextBytes), doing: what)
    }

    /// Sets the modification time of file `nodeId` (`touch -d`, `cp -p`, `rsync -a` through the
    /// mount). While new content awaits upload the time travels with it (in its content record);
    /// a synced file's time travels as a `move` to where the file is, whose replay seals a new
    /// node record with it (other devices take a node record's time when its content did not
    /// change, docs/sync.md). Returns false, changing nothing, for a folder.
    @discardableResult
    public func setModifiedTime(of nodeId: String, to seconds: Int64) throws -> Bool {
        try db.transaction {
            guard let n = try node(id: nodeId), !n.isFolder else { return false }
            if n.modifiedAt == seconds { return true }
            try nodesTable.setModifiedAt(id: nodeId, seconds)
            if n.pendingOp != .upload, let parentId = n.parentId, n.remoteId != nil {
                try enqueue(.move, nodeId: n.id, payload: .init(name: n.name, parentId: parentId, remoteId: n.remoteId, reseal: true),
                            baseVersion: n.version)
                try nodesTable.notePending(id: n.id, .move)
            }
            return true
        }
    }

    /// Seals `produce`'s bytes into a new durable staging blob, after checking that they fit.
    private func seal(size: UInt64, doing what: String,
                      _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> BlobRecord {
        try blobs.checkFreeSpace(for: BlobStore.sealedSize(plaintextSize: size), doing: what)
        return try blobs.write(area: .staging, produce)
    }
}
