import Foundation
import VaultPrimitives

/// What a folder import did.
public struct ImportResult: Sendable, Encodable {
    public var files: Int
    public var folders: Int
    public var bytes: UInt64
    /// Entries left out (see `LocalTree`): failures first in the order met, then by design.
    public var skipped: [LocalTree.Skipped] = []

    /// The first entry that could not be imported, if any (skips by design do not count).
    public var firstFailure: LocalTree.Skipped? { skipped.first { $0.failure != nil } }
}

extension Vault {
    /// Imports a local folder tree under `dest` (created if missing) as sealed files awaiting
    /// upload. See `importFolder(_:to:progress:)` for a tree already scanned.
    @discardableResult
    public func importFolder(_ localDir: String, to dest: String, progress: (Int) -> Void = { _ in }) throws -> ImportResult {
        try importFolder(try LocalTree.scan(localDir), to: dest, progress: progress)
    }

    /// Imports a scanned tree (scan it before opening the vault) under `dest`. Blobs are sealed
    /// on other threads while one transaction records every node (`dest` and its missing parents
    /// included) as its blob comes; one filesystem sync makes the blobs durable before that
    /// transaction commits, so a crash or a failure leaves either
    /// nothing or everything (`vault doctor`, or the next command, removes blobs of an import that
    /// never committed). A file that cannot be read, or changes while it is read, is skipped and
    /// reported in `skipped` with the tree's other skipped entries; the rest is imported.
    @discardableResult
    public func importFolder(_ tree: LocalTree, to dest: String, progress: (Int) -> Void = { _ in }) throws -> ImportResult {
        var tree = tree
        // Where it goes: the deepest existing folder of `dest`, and the folders still to create.
        var base = try node(id: Self.rootId)!
        var missing: [String] = []
        for part in try NameRules.components(dest) {
            if missing.isEmpty, let next = try child(of: base.id, named: part) {
                guard next.isFolder else { throw VaultError(.conflict, "\(dest) is a file, not a folder") }
                base = next
            } else {
                missing.append(part)
            }
        }
        let prefix = missing.joined(separator: "/")
        func under(_ rel: String) -> String { prefix.isEmpty ? rel : rel.isEmpty ? prefix : prefix + "/" + rel }
        /// "a/b/c" → ("a/b", "c"); "c" → ("", "c").
        func split(_ rel: String) -> (String, String) {
            guard let slash = rel.lastIndex(of: "/") else { return ("", rel) }
            return (String(rel[..<slash]), String(rel[rel.index(after: slash)...]))
        }
        if prefix.isEmpty {
            for f in tree.files where !f.relativePath.contains("/") {
                if try child(of: base.id, named: f.relativePath) != nil {
                    throw VaultError(.alreadyExists, "'\(f.relativePath)' already exists in \(try path(of: base))", hint: "import into a new folder")
                }
            }
        }
        try blobs.checkFreeSpace(for: tree.files.reduce(0) { $0 + BlobStore.sealedSize(plaintextSize: $1.size) },
                                 doing: "import \(DisplayText.escaped(tree.root))")
        // Files are sealed on other threads (no fsync each) while this one records each in the
        // transaction as it comes; one sync makes the blobs durable before the transaction commits.
        let batch = blobs.beginBatch(tree.files.map(\.path), area: .staging)
        var sealed: [(rel: String, blob: BlobRecord)] = []
        do {
            // New nodes take ids in ascending order, as the blobs do (`BlobStore.ascendingIds`).
            var newIds = BlobStore.ascendingIds(missing.count + tree.folders.count + tree.files.count).makeIterator()
            func nextId() -> String { newIds.next().map(Hex.encode) ?? Self.newId() }
            try db.transaction {
                var ids: [String: Node] = ["": base]
                func folder(_ rel: String) throws -> Node {
                    if let n = ids[rel] { return n }
                    let (parentRel, name) = split(rel)
                    let parent = try folder(parentRel)
                    if let existing = try child(of: parent.id, named: name) {
                        guard existing.isFolder else { throw VaultError(.alreadyExists, "'\(name)' exists and is a file") }
                        ids[rel] = existing; return existing
                    }
                    let n = Node(id: nextId(), remoteId: nil, parentId: parent.id, name: name, type: .folder, size: 0,
                                 version: 0, modifiedAt: Vault.now, mimeType: nil, contentState: .local, localPath: nil,
                                 pinned: parent.pinned, lastAccessed: nil, pendingOp: .create, localVersion: 1, sha256: nil)
                    try insert(n)
                    try enqueue(.createFolder, nodeId: n.id, payload: .init(name: name, parentId: parent.id), baseVersion: nil)
                    ids[rel] = n
                    return n
                }
                _ = try folder(prefix)
                for f in tree.folders { _ = try folder(under(f)) }
                for (i, f) in tree.files.enumerated() {
                    defer { progress(i + 1) }
                    guard let result = try batch.next() else { break }
                    guard case .sealed(let blob) = result else {
                        if case .skipped(let why) = result { tree.skip(f, why) }   // unreadable, changed while read, or gone
                        continue
                    }
                    // Recorded now, so it is removed with the batch's other blobs if the import fails.
                    sealed.append((f.relativePath, blob))
                    let (parentRel, name) = split(under(f.relativePath))
                    let parent = try folder(parentRel)
                    if try child(of: parent.id, named: name) != nil {
                        throw VaultError(.alreadyExists, "'\(name)' already exists in \(try path(of: parent))")
                    }
                    let n = Node(id: nextId(), remoteId: nil, parentId: parent.id, name: name, type: .file, size: blob.size,
                                 version: 0, modifiedAt: Vault.now, mimeType: NameRules.mimeType(forName: name),
                                 contentState: .local, localPath: blob.id, pinned: parent.pinned, lastAccessed: Vault.now,
                                 pendingOp: .upload, localVersion: 1, sha256: blob.sha256)
                    try insert(n)
                    try recordBlob(blob, nodeId: n.id)
                    try enqueue(.upload, nodeId: n.id,
                                payload: .init(name: name, parentId: parent.id, blobId: blob.id, size: blob.size,
                                               sha256: blob.sha256, mimeType: n.mimeType), baseVersion: nil)
                }
                blobs.syncAll()
                try POSIX.fsyncDirectory(layout.stagingDirectory)
            }
        } catch {
            for blob in sealed.map(\.blob) + batch.stop() { blobs.delete(blob.id, area: .staging) }
            throw error
        }
        let failed = tree.skipped
        let order = failed.filter { $0.failure != nil } + failed.filter { $0.failure == nil }
        return ImportResult(files: sealed.count, folders: tree.folders.count, bytes: sealed.reduce(0) { $0 + $1.blob.size },
                            skipped: order)
    }
}
