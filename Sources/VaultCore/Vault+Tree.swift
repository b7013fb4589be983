import Foundation
import VaultSQL
import VaultPrimitives

/// The file tree: paths, listing and the local operations (each recorded in the outbox in the
/// same transaction).
extension Vault {
    public static let rootId = "root"

    /// The node with `id`, if any.
    public func node(id: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE id = ?", [id]).map(Node.init(row:))
    }

    func child(of parentId: String, named name: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? AND name = ?", [parentId, name]).map(Node.init(row:))
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
        try db.query("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? ORDER BY type DESC, name", [id]).map(Node.init(row:))
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
        try db.run("INSERT INTO nodes(\(Node.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", n.bindings)
    }

    static func newId() -> String { UUID().uuidString.lowercased() }

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
                             pinned: current.pinned, lastAccessed: nil, pendingOp: "create", localVersion: 1, sha256: nil)
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
        do {
            return try db.transaction {
                try recordBlob(blob, nodeId: nil)
                var n: Node
                if var old = existing {
                    if let oldBlob = old.localPath {
                        try db.run("INSERT INTO revisions(id, node_id, remote_revision_id, size, sha256, modified_at, blob_id, device) VALUES (?,?,?,?,?,?,?,?)",
                                   [Self.newId(), old.id, nil as String?, Int64(old.size), old.sha256, old.modifiedAt, oldBlob, "local"])
                    }
                    old.size = blob.size; old.sha256 = blob.sha256; old.localPath = blob.id
                    old.contentState = .local; old.modifiedAt = Vault.now; old.localVersion += 1
                    old.pendingOp = "upload"; old.lastAccessed = Vault.now
                    try db.run("UPDATE nodes SET size=?, sha256=?, local_path=?, content_state='LOCAL', modified_at=?, local_version=?, pending_op='upload', last_accessed=? WHERE id=?",
                               [Int64(old.size), old.sha256, old.localPath, old.modifiedAt, old.localVersion, old.lastAccessed, old.id])
                    n = old
                } else {
                    n = Node(id: Self.newId(), remoteId: nil, parentId: parent.id, name: name, type: .file, size: blob.size,
                             version: 0, modifiedAt: Vault.now, mimeType: NameRules.mimeType(forName: name),
                             contentState: .local, localPath: blob.id, pinned: parent.pinned, lastAccessed: Vault.now,
                             pendingOp: "upload", localVersion: 1, sha256: blob.sha256)
                    try insert(n)
                }
                try db.run("UPDATE blobs SET node_id = ? WHERE id = ?", [n.id, blob.id])
                if try existing == nil || !mergeNewContent(into: n, blob: blob) {
                    try enqueue(.upload, nodeId: n.id,
                                payload: .init(name: n.name, parentId: n.parentId, remoteId: n.remoteId, blobId: blob.id,
                                               size: blob.size, sha256: blob.sha256, mimeType: n.mimeType),
                                baseVersion: existing?.version)
                }
                return n
            }
        } catch {
            blobs.delete(blob.id, area: .staging)
            throw error
        }
    }

    func recordBlob(_ b: BlobRecord, nodeId: String?) throws {
        try db.run("INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256) VALUES (?,?,?,?,?,?,?,?,?)",
                   [b.id, nodeId, b.area.rawValue, Int64(b.size), Int64(b.sealedSize), b.sha256, Int64(b.keyEpoch), Vault.now, b.sealedSHA256])
    }

    /// Renames and/or moves a node. Moving into an existing folder keeps the name.
    @discardableResult
    public func move(_ source: String, to dest: String) throws -> Node {
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
            n.parentId = parent.id; n.name = name; n.modifiedAt = Vault.now
            try db.run("UPDATE nodes SET parent_id=?, name=?, modified_at=?, pending_op=COALESCE(pending_op,'move') WHERE id=?",
                       [parent.id, name, n.modifiedAt, n.id])
            try enqueue(.move, nodeId: n.id, payload: .init(name: name, parentId: parent.id, remoteId: n.remoteId), baseVersion: n.version)
            return n
        }
    }

    /// All descendants of a folder (not including it), deepest last.
    func descendants(of id: String) throws -> [Node] {
        let cols = Node.columns.split(separator: ",").map { "n." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try db.query("""
            WITH RECURSIVE sub(id) AS (SELECT id FROM nodes WHERE parent_id = ?
              UNION ALL SELECT nodes.id FROM nodes JOIN sub ON nodes.parent_id = sub.id)
            SELECT \(cols) FROM nodes n JOIN sub ON n.id = sub.id
            """, [id]).map(Node.init(row:))
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
                for r in try db.query("SELECT id, area FROM blobs WHERE node_id = ?", [x.id]) {
                    doomedBlobs.append((try r.decode(String.self, "id"), try r.decode(BlobArea.self, "area")))
                }
                try db.run("DELETE FROM blobs WHERE node_id = ?", [x.id])
                try db.run("DELETE FROM revisions WHERE node_id = ?", [x.id])
            }
            try compactOutbox(removing: all)
            // Children first, for the parent reference.
            for x in all.reversed() {
                try retireSeqs(remoteId: x.remoteId, nodeId: x.id)
                try db.run("DELETE FROM nodes WHERE id = ?", [x.id])
            }
            try db.run("DELETE FROM transfers WHERE node_id NOT IN (SELECT id FROM nodes)")
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
            for x in all { try db.run("UPDATE nodes SET pinned = ? WHERE id = ?", [pinned, x.id]) }
            return all
        }
    }
}
