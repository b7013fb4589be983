import Foundation

/// What a folder import did.
public struct ImportResult: Sendable, Encodable {
    public var files: Int
    public var folders: Int
    public var bytes: UInt64
}

extension Vault {
    /// Imports a local folder tree under `dest` (created if missing) as sealed files awaiting
    /// upload. Blobs are written first and made durable with one filesystem sync; then every node
    /// is published in one transaction, so a crash leaves either nothing or everything
    /// (`vault doctor` removes blobs of an import that never committed).
    @discardableResult
    public func importFolder(_ localDir: String, to dest: String, progress: (Int) -> Void = { _ in }) throws -> ImportResult {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: localDir, isDirectory: &isDir), isDir.boolValue else {
            throw VaultError(.notFound, "\(localDir) is not a folder")
        }
        // Plan: folders and files, names checked before anything is written.
        var folders: [String] = []
        var files: [(local: String, rel: String, size: UInt64)] = []
        var total: UInt64 = 0
        guard let e = fm.enumerator(atPath: localDir) else { throw VaultError(.io, "cannot read \(localDir)") }
        while let rel = e.nextObject() as? String {
            let full = (localDir as NSString).appendingPathComponent(rel)
            for part in rel.split(separator: "/") { try NameRules.validate(String(part)) }
            let attrs = try fm.attributesOfItem(atPath: full)
            switch attrs[.type] as? FileAttributeType {
            case .typeDirectory?: folders.append(rel)
            case .typeRegular?:
                let size = (attrs[.size] as? NSNumber)?.uint64Value ?? 0
                files.append((full, rel, size)); total += BlobStore.sealedSize(plaintextSize: size)
            default: continue   // symlinks, devices: not imported
            }
        }
        try blobs.checkFreeSpace(for: total, doing: "import \(localDir)")
        let target = dest.isEmpty ? "/" : dest
        let root: Node
        if let existing = try? resolve(target) { root = existing } else { root = try mkdir(target, parents: true) }
        guard root.isFolder else { throw VaultError(.conflict, "\(dest) is a file, not a folder") }
        /// "a/b/c" → ("a/b", "c"); "c" → ("", "c").
        func split(_ rel: String) -> (String, String) {
            let parts = rel.split(separator: "/").map(String.init)
            return (parts.dropLast().joined(separator: "/"), parts.last ?? "")
        }
        for f in files {
            let (parentRel, name) = split(f.rel)
            if parentRel.isEmpty, try child(of: root.id, named: name) != nil {
                throw VaultError(.alreadyExists, "'\(name)' already exists in \(try path(of: root))", hint: "import into a new folder")
            }
        }
        // Seal every file (no fsync each), then one sync.
        var sealed: [(rel: String, blob: BlobRecord)] = []
        do {
            for (i, f) in files.enumerated() {
                sealed.append((f.rel, try blobs.importFile(f.local, area: .staging, durable: false, checkSpace: false)))
                progress(i + 1)
            }
            blobs.syncAll()
            try POSIX.fsyncDirectory(layout.stagingDirectory)
            try db.transaction {
                var ids: [String: Node] = ["": root]
                func folder(_ rel: String) throws -> Node {
                    if let n = ids[rel] { return n }
                    let (parentRel, name) = split(rel)
                    let parent = try folder(parentRel)
                    if let existing = try child(of: parent.id, named: name) {
                        guard existing.isFolder else { throw VaultError(.alreadyExists, "'\(name)' exists and is a file") }
                        ids[rel] = existing; return existing
                    }
                    let n = Node(id: Self.newId(), remoteId: nil, parentId: parent.id, name: name, type: .folder, size: 0,
                                 version: 0, modifiedAt: Vault.now, mimeType: nil, contentState: .local, localPath: nil,
                                 pinned: parent.pinned, lastAccessed: nil, pendingOp: "create", localVersion: 1, sha256: nil)
                    try insert(n)
                    try enqueue(.createFolder, nodeId: n.id, payload: .init(name: name, parentId: parent.id), baseVersion: nil)
                    ids[rel] = n
                    return n
                }
                for f in folders { _ = try folder(f) }
                for (rel, blob) in sealed {
                    let (parentRel, name) = split(rel)
                    let parent = try folder(parentRel)
                    if try child(of: parent.id, named: name) != nil {
                        throw VaultError(.alreadyExists, "'\(name)' already exists in \(try path(of: parent))")
                    }
                    let n = Node(id: Self.newId(), remoteId: nil, parentId: parent.id, name: name, type: .file, size: blob.size,
                                 version: 0, modifiedAt: Vault.now, mimeType: NameRules.mimeType(forName: name),
                                 contentState: .local, localPath: blob.id, pinned: parent.pinned, lastAccessed: Vault.now,
                                 pendingOp: "upload", localVersion: 1, sha256: blob.sha256)
                    try insert(n)
                    try recordBlob(blob, nodeId: n.id)
                    try enqueue(.upload, nodeId: n.id,
                                payload: .init(name: name, parentId: parent.id, blobId: blob.id, size: blob.size,
                                               sha256: blob.sha256, mimeType: n.mimeType), baseVersion: nil)
                }
            }
        } catch {
            for s in sealed { blobs.delete(s.blob.id, area: .staging) }
            throw error
        }
        return ImportResult(files: sealed.count, folders: folders.count, bytes: sealed.reduce(0) { $0 + $1.blob.size })
    }
}
