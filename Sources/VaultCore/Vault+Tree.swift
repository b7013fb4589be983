import Foundation
import VaultSQL
import VaultPrimitives
import VaultCrypto

/// The file tree: paths, listing and the local operations (each recorded in the outbox in the
/// same transaction).
extension Vault {
    public static let rootId = "root"

    /// The node with `id`, if any.
    public func node(id: String) throws -> Node? {
        try nodesTable.node(id: id)
    }

    func child(of parentId: String, named name: String) throws -> Node? {
        try nodesTable.child(of: parentId, named: name)
    }

    /// The node at a vault path ("/" is the root).
    public func resolve(_ path: String) throws -> Node {
        var current = try node(id: Self.rootId)!
        for part in try NameRules.components(path) {
            guard current.isFolder, let next = try child(of: current.id, named: part) else {
                throw VaultError(.notFound, "no such file or folder: \(path)", hint: "see `vault ls`")
            }
            current = next
        }
        return current
    }

    /// The children of folder `id`, folders first, then by name.
    public func children(of id: String) throws -> [Node] {
        try nodesTable.children(of: id)
    }

    /// Streams the children of folder `id` to `body` a page of at most `pageSize` at a time, in
    /// the order of `children(of:)` (folders first, then files, each by name). Each page is a
    /// range of the `(parent_id, name)` index: a large folder is never read or held whole, and
    /// `body` returning false stops the reading.
    public func forEachChildPage(of id: String, pageSize: Int = 500, _ body: ([Node]) throws -> Bool) throws {
        for type in [NodeType.folder, .file] {
            var after: String?
            while true {
                let page = try nodesTable.children(of: id, type: type, after: after, limit: pageSize)
                if page.isEmpty { break }
                guard try body(page) else { return }
                if page.count < pageSize { break }
                after = page.last?.name
            }
        }
    }

    /// The absolute vault path of a node.
    public func path(of node: Node) throws -> String {
        var parts: [String] = []
        var cur = node
        while let pid = cur.parentId, let parent = try self.node(id: pid) {
            parts.append(cur.name); cur = parent
        }
        return "/" + parts.reversed().joined(separator: "/")
    }

    /// Splits a destination path into its (existing) parent folder and the new name.
    func parentAndName(_ path: String) throws -> (Node, String) {
        var parts = try NameRules.components(path)
        guard let name = parts.popLast() else {
            throw VaultError(.invalidName, "the root folder cannot be the target here")
        }
        let parent = try resolve("/" + parts.joined(separator: "/"))
        guard parent.isFolder else { throw VaultError(.conflict, "\(try self.path(of: parent)) is a file, not a folder") }
        return (parent, name)
    }

    func requireFree(_ name: String, in parent: Node) throws {
        if try child(of: parent.id, named: name) != nil {
            let p = try path(of: parent)
            throw VaultError(.alreadyExists, "'\(name)' already exists in \(p)",
                             hint: "choose another name, or move/remove the existing one first")
        }
    }

    func insert(_ n: Node) throws {
        try nodesTable.insert(n)
    }

    /// A new local id (a node, a revision kept here): 16 random bytes as 32 lowercase hex digits,
    /// stored as a 16-byte key (`CompactColumns.key`; vaults before schema 9 hold UUIDs, kept as text).
    static func newId() -> String { Hex.encode(SecureRandom.bytes(16)) }

    /// Creates a folder (and, with `parents`, any missing ancestors).
    @discardableResult
    public func mkdir(_ path: String, parents: Bool = false) throws -> Node {
        try db.transaction {
            var current = try node(id: Self.rootId)!
            let parts = try NameRules.components(path)
            guard !parts.isEmpty else { throw VaultError(.alreadyExists, "/ already exists") }
            for (i, part) in parts.enumerated() {
                if let existing = try child(of: current.id, named: part) {
                    let last = i == parts.count - 1
                    if !existing.isFolder || (last && !parents) {
                        throw VaultError(.alreadyExists, "'\(part)' already exists in \(try self.path(of: current))")
                    }
                    current = existing; continue
                }
                if i < parts.count - 1 && !parents {
                    throw VaultError(.notFound, "no such folder: /\(parts[0...i].joined(separator: "/"))", hint: "use `vault mkdir -p`")
                }
                let n = Node(id: Self.newId(), remoteId: nil, parentId: current.id, name: part, type: .folder, size: 0,
                             version: 0, modifiedAt: Vault.now, mimeType: nil, contentState: .local, localPath: nil,
                             pinned: current.pinned, lastAccessed: nil, pendingOp: .create, localVersion: 1, sha256: nil)
                try insert(n)
                try enqueue(.createFolder, nodeId: n.id, payload: .init(name: part, parentId: current.id), baseVersion: nil)
                current = n
            }
            return current
        }
    }

    /// Imports a local file as a new sealed file node (or, with `replace`, a new version of an
    /// existing one: the previous content is kept as a revision). The node awaits upload.
    @discardableResult
    public func put(localFile: String, to dest: String?, replace: Bool = false) throws -> Node {
        try put(try SourceFile(localFile, accepting: .regular, folderHint: "use `vault put -r` to import a folder"),
                to: dest, replace: replace)
    }

    /// Like `put(localFile:to:replace:)`, from a file already opened (before the vault was).
    @discardableResult
    public func put(_ source: SourceFile, to dest: String?, replace: Bool = false) throws -> Node {
        let baseName = (source.path as NSString).lastPathComponent
        var (parent, name): (Node, String)
        if let dest, !dest.isEmpty {
            let target = try? resolve(dest)
            if let target, target.isFolder {
                (parent, name) = (target, baseName)
            } else {
                (parent, name) = try parentAndName(dest)
            }
        } else {
            (parent, name) = (try node(id: Self.rootId)!, baseName)
        }
        try NameRules.validate(name)
        let existing = try child(of: parent.id, named: name)
        if let existing {
            if existing.isFolder { throw VaultError(.alreadyExists, "'\(name)' is a folder in \(try path(of: parent))") }
            if !replace {
                throw VaultError(.alreadyExists, "'\(name)' already exists in \(try path(of: parent))",
                                 hint: "add --replace to store a new version (the old one is kept as a revision)")
            }
        }
        // Seal first (outside the transaction: it may take minutes), then publish the metadata.
        let blob: BlobRecord
        do { blob = try blobs.importFile(source, area: .staging) } catch let p as SourceProblem { throw p.error }
        return try publishFile(blob, in: parent, named: name, replacing: existing)
    }

    /// Publishes sealed staging blob `blob` as file `name` in `parent`: a new node, or a new
    /// version of `existing` (its previous content kept as a revision), awaiting upload, in one
    /// transaction. The blob is deleted when publishing fails. `keepPrevious` false drops the
    /// previous content instead of keeping it as a revision, when it never left this device
    /// (its pending upload takes the new content; otherwise it is kept after all).
    func publishFile(_ blob: BlobRecord, in parent: Node, named name: String, replacing existing: Node?,
                     keepPrevious: Bool = true) throws -> Node {
        var dropped: String?
        do {
            let published: Node = try db.transaction {
                try recordBlob(blob, nodeId: nil)
                var n: Node
                func keepAsRevision(_ old: Node, _ oldBlob: String) throws {
                    try revisionsTable.insertLocal(id: Self.newId(), nodeId: old.id, size: Int64(old.size), sha256: old.sha256,
                                                   modifiedAt: old.modifiedAt, blobId: oldBlob)
                }
                if var old = existing {
                    if let oldBlob = old.localPath, keepPrevious { try keepAsRevision(old, oldBlob) }
                    old.size = blob.size; old.sha256 = blob.sha256; old.localPath = blob.id
                    old.contentState = .local; old.modifiedAt = Vault.now; old.localVersion += 1
                    old.pendingOp = .upload; old.lastAccessed = Vault.now
                    try nodesTable.setNewLocalContent(old)
                    n = old
                } else {
                    n = Node(id: Self.newId(), remoteId: nil, parentId: parent.id, name: name, type: .file, size: blob.size,
                             version: 0, modifiedAt: Vault.now, mimeType: NameRules.mimeType(forName: name),
                             contentState: .local, localPath: blob.id, pinned: parent.pinned, lastAccessed: Vault.now,
                             pendingOp: .upload, localVersion: 1, sha256: blob.sha256)
                    try insert(n)
                }
                try blobsTable.setNode(id: blob.id, n.id)
                let merged = try existing != nil && mergeNewContent(into: n, blob: blob)
                if !merged {
                    try enqueue(.upload, nodeId: n.id,
                                payload: .init(name: n.name, parentId: n.parentId, remoteId: n.remoteId, blobId: blob.id,
                                               size: blob.size, sha256: blob.sha256, mimeType: n.mimeType),
                                baseVersion: existing?.version)
                }
                if !keepPrevious, let old = existing, let oldBlob = old.localPath {
                    if merged && old.remoteId == nil {
                        try blobsTable.delete(id: oldBlob)
                        dropped = oldBlob
                    } else {
                        try keepAsRevision(old, oldBlob)   // an upload of it is under way, or it is on the server
                    }
                }
                return n
            }
            // Both areas, as `remove` does.
            if let dropped { blobs.delete(dropped, area: .staging); blobs.delete(dropped, area: .cache) }
            return published
        } catch {
            blobs.delete(blob.id, area: .staging)
            throw error
        }
    }

    func recordBlob(_ b: BlobRecord, nodeId: String?) throws {
        try blobsTable.insert(b, nodeId: nodeId, now: Vault.now)
    }

    /// Renames and/or moves a node. Moving into an existing folder keeps the name. The node's
    /// modification time becomes now, unless `keepingModifiedTime` (a `rename(2)` through the
    /// mount, which changes no file's time, as on any POSIX filesystem).
    @discardableResult
    public func move(_ source: String, to dest: String, keepingModifiedTime: Bool = false) throws -> Node {
        try db.transaction {
            var n = try resolve(source)
            guard n.id != Self.rootId else { throw VaultError(.usage, "the root folder cannot be moved") }
            var (parent, name): (Node, String)
            if let target = try? resolve(dest), target.isFolder, target.id != n.id {
                (parent, name) = (target, n.name)
            } else {
                (parent, name) = try parentAndName(dest)
            }
            // Names compare byte for byte (Swift's `==` would call "é" and "e" + U+0301 equal).
            if parent.id == n.parentId && name.utf8.elementsEqual(n.name.utf8) { return n }
            try requireFree(name, in: parent)
            // No cycles: the new parent may not be the node or one of its descendants.
            var walk: Node? = parent
            while let w = walk {
                if w.id == n.id { throw VaultError(.conflict, "cannot move a folder into itself or one of its subfolders") }
                walk = try w.parentId.flatMap { try node(id: $0) }
            }
            n.parentId = parent.id; n.name = name
            if !keepingModifiedTime { n.modifiedAt = Vault.now }
            try nodesTable.move(id: n.id, to: parent.id, name: name, modifiedAt: n.modifiedAt)
            try enqueue(.move, nodeId: n.id, payload: .init(name: name, parentId: parent.id, remoteId: n.remoteId), baseVersion: n.version)
            return n
        }
    }

    /// All descendants of a folder (not including it), deepest last.
    func descendants(of id: String) throws -> [Node] {
        try nodesTable.descendants(of: id)
    }

    /// Removes a file, or a folder (non-empty only with `recursive`). Returns the removed nodes.
    @discardableResult
    public func remove(_ path: String, recursive: Bool = false) throws -> [Node] {
        var doomedBlobs: [(String, BlobArea)] = []
        let removed: [Node] = try db.transaction {
            let n = try resolve(path)
            guard n.id != Self.rootId else { throw VaultError(.usage, "the root folder cannot be removed") }
            let below = n.isFolder ? try descendants(of: n.id) : []
            if !below.isEmpty && !recursive {
                throw VaultError(.conflict, "\(path) is a folder that is not empty", hint: "use `vault rm -r` to remove it and everything in it")
            }
            let all = [n] + below
            for x in all {
                doomedBlobs += try blobsTable.blobs(ofNode: x.id).map { ($0.id, $0.area) }
                try blobsTable.delete(ofNode: x.id)
                try revisionsTable.delete(nodeId: x.id)
            }
            try compactOutbox(removing: all)
            // Children first, for the parent reference.
            for x in all.reversed() {
                try retireSeqs(remoteId: x.remoteId, nodeId: x.id)
                try transfersTable.delete(ofNode: x.id)
                try nodesTable.delete(id: x.id)
            }
            return all
        }
        // Both areas: a publish interrupted between its commit and its move leaves the file in the other.
        for (id, _) in doomedBlobs { blobs.delete(id, area: .cache); blobs.delete(id, area: .staging) }
        return removed
    }

    /// Pins or unpins a file, or a folder with everything in it. Returns the nodes it changed.
    @discardableResult
    public func setPinned(_ path: String, _ pinned: Bool) throws -> [Node] {
        try db.transaction {
            let n = try resolve(path)
            let all = [n] + (n.isFolder ? try descendants(of: n.id) : [])
            for x in all { try nodesTable.setPinned(id: x.id, pinned) }
            return all
        }
    }
}
