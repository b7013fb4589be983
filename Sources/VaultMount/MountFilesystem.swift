import Foundation
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The filesystem operations of `vault mount`, on the vault's sealed API only: reads come from
/// the sealed blob segment by segment as each authenticates (a tampered segment is EIO), writes
/// are staged in memory and committed as a new sealed version on close or fsync
/// (`Vault.replaceContent`), and the tree changes go through `mkdir`, `move` and `remove`
/// exactly as the CLI's commands do. One request at a time (the session loop is one thread).
final class MountFilesystem {
    let gate: VaultGate
    let inodes = InodeTable()
    let handles = HandleTable()
    let readOnly: Bool
    let log: (String) -> Void

    init(gate: VaultGate, readOnly: Bool, log: @escaping (String) -> Void) {
        self.gate = gate; self.readOnly = readOnly; self.log = log
    }

    // MARK: Tree

    /// What the kernel is told about node `n`: a STALE file's size is its local (older) version's,
    /// the one reads return (as `cat` does).
    func attributes(_ n: Node, _ i: InodeTable.Inode, _ v: Vault? = nil) -> InodeAttributes {
        var size = n.size
        if n.contentState == .stale, let v, let local = try? v.localSize(of: n) { size = local }
        var a = InodeAttributes(ino: i.ino, isFolder: n.isFolder, size: size, modified: i.modifiedOverride ?? n.modifiedAt)
        if let s = i.staged { a.size = UInt64(s.count); a.modified = i.modifiedOverride ?? s.modified }
        return a
    }

    func node(_ i: InodeTable.Inode, _ v: Vault) throws(FuseErrno) -> Node {
        do {
            guard let n = try v.node(id: i.nodeId) else { throw FuseErrno(ENOENT) }
            return n
        } catch { throw FuseErrno(error, doing: "reading node \(i.nodeId)") }
    }

    func folder(_ ino: UInt64, _ v: Vault) throws(FuseErrno) -> Node {
        let n = try node(try inodes.inode(ino), v)
        guard n.isFolder else { throw FuseErrno(ENOTDIR) }
        return n
    }

    /// A name the kernel passed: UTF-8 and valid in the vault, else EINVAL / ENAMETOOLONG.
    static func name(_ raw: UnsafePointer<CChar>) throws(FuseErrno) -> String {
        guard let s = String(validatingCString: raw) else { throw FuseErrno(EINVAL, "a name that is not UTF-8") }
        if s.utf8.count > NameRules.maxVaultNameBytes { throw FuseErrno(ENAMETOOLONG) }
        do { try NameRules.validate(s) } catch { throw FuseErrno(EINVAL, "a name the vault refuses") }
        return s
    }

    func child(_ parent: Node, _ name: String, _ v: Vault) throws(FuseErrno) -> Node? {
        do { return try v.child(ofFolder: parent.id, named: name) } catch { throw FuseErrno(error, doing: "looking up in \(parent.id)") }
    }

    func lookup(_ parent: UInt64, _ name: String) throws(FuseErrno) -> InodeAttributes {
        let v = try gate.vault()
        let p = try folder(parent, v)
        guard let n = try child(p, name, v) else { throw FuseErrno(ENOENT) }
        return attributes(n, inodes.inode(forNode: n.id), v)
    }

    func getattr(_ ino: UInt64) throws(FuseErrno) -> InodeAttributes {
        let v = try gate.vault()
        let i = try inodes.inode(ino)
        return attributes(try node(i, v), i, v)
    }

    func opendir(_ ino: UInt64) throws(FuseErrno) -> UInt64 {
        let v = try gate.vault()
        let d = try folder(ino, v)
        let kids: [Node]
        do { kids = try v.children(of: d.id) } catch { throw FuseErrno(error, doing: "listing \(d.id)") }
        let here = attributes(d, try inodes.inode(ino))
        var parent = here
        if let id = d.parentId {
            let i = inodes.inode(forNode: id)
            parent = attributes(try node(i, v), i)
        }
        var entries: [(name: String, attributes: InodeAttributes)] = [(".", here), ("..", parent)]
        for k in kids { entries.append((k.name, attributes(k, inodes.inode(forNode: k.id), v))) }
        return handles.add(HandleTable.OpenFolder(entries: entries))
    }

    /// Fills up to `size` bytes of directory entries from entry `offset` on (`add` puts one
    /// entry into the buffer and returns the bytes it needs; more than offered: not added).
    func readdir(_ fh: UInt64, size: Int, offset: Int, add: (String, InodeAttributes, Int, UnsafeMutableRawBufferPointer) -> Int) throws(FuseErrno) -> [UInt8] {
        _ = try gate.vault()
        let d = try handles.folder(fh)
        var out = [UInt8](repeating: 0, count: size)
        var used = 0
        var index = max(0, offset)
        out.withUnsafeMutableBytes { buf in
            while index < d.entries.count {
                let e = d.entries[index]
                let need = add(e.name, e.attributes, index + 1, UnsafeMutableRawBufferPointer(rebasing: buf[used...]))
                if need > size - used { break }
                used += need; index += 1
            }
        }
        return Array(out.prefix(used))
    }

    // MARK: Reading

    /// Opens file `ino`; `keepCache`: its content is the one served at the previous open, so the
    /// kernel's cached pages of it are still right.
    func open(_ ino: UInt64, flags: Int32) throws(FuseErrno) -> (handle: UInt64, keepCache: Bool) {
        let v = try gate.vault()
        let i = try inodes.inode(ino)
        let n = try node(i, v)
        guard !n.isFolder else { throw FuseErrno(EISDIR) }
        let access = flags & O_ACCMODE
        let writable = access == O_WRONLY || access == O_RDWR
        if writable && readOnly { throw FuseErrno(EROFS) }
        let f = HandleTable.OpenFile(inode: i, writable: writable, append: flags & O_APPEND != 0)
        if writable && flags & O_TRUNC != 0 {
            try stage(i, v).truncate(0)
        } else if i.staged == nil && access != O_WRONLY {
            f.blob = try openBlob(n, v)
        }
        let keep = i.staged == nil && n.localPath != nil && n.localPath == i.servedBlob
        i.servedBlob = i.staged == nil ? n.localPath : nil
        return (handles.add(f), keep)
    }

    func openBlob(_ n: Node, _ v: Vault) throws(FuseErrno) -> BlobHandle {
        do { return try v.openContent(n) } catch {
            let e = FuseErrno(error, doing: "opening the content of \(n.id)")
            log("\(e.reason ?? "opening \(n.id) failed")\((error as? VaultError)?.kind == .notLocal ? " (not on this device: `vault pin` or `vault get` it first)" : "")")
            throw e
        }
    }

    func read(_ fh: UInt64, size: Int, offset: Int64, _ reply: (UnsafeRawBufferPointer) -> Void) throws(FuseErrno) {
        let v = try gate.vault()
        let f = try handles.file(fh)
        if let s = f.inode.staged {
            let start = min(Int(offset), s.count), end = min(s.count, start + size)
            reply(UnsafeRawBufferPointer(rebasing: s.bytes[start..<end]))
            return
        }
        if f.blob == nil { f.blob = try openBlob(try node(f.inode, v), v) }
        let blob = f.blob!
        let total = blob.plaintextSize
        guard UInt64(offset) < total else { reply(UnsafeRawBufferPointer(start: nil, count: 0)); return }
        let count = Int(min(UInt64(size), total - UInt64(offset)))
        do {
            let bytes = try blob.read(offset: UInt64(offset), count: count)
            bytes.withUnsafeBytes(reply)
        } catch {
            let e = FuseErrno(error, doing: "reading \(f.inode.nodeId) at \(offset)")
            log(e.reason ?? "a read failed")
            throw e
        }
    }

    // MARK: Writing

    /// The inode's staged content, loaded from its authenticated current content on first use.
    func stage(_ i: InodeTable.Inode, _ v: Vault) throws(FuseErrno) -> StagedContent {
        if let s = i.staged { return s }
        let n = try node(i, v)
        let s = StagedContent(modified: n.modifiedAt)
        if n.size > 0 {
            guard n.size <= UInt64(StagedContent.limit) else { throw FuseErrno(EFBIG, "\(n.id) is larger than the mount can rewrite") }
            do {
                var at = 0
                var failure: FuseErrno?
                try v.readContent(n) { piece in
                    do throws(FuseErrno) { try s.write(piece, at: at) } catch { failure = error }
                    at += piece.count
                }
                if let failure { throw failure }
            } catch {
                s.release()
                let e = FuseErrno(error, doing: "loading \(n.id) to change it")
                log(e.reason ?? "loading failed")
                throw e
            }
        }
        s.dirty = false
        s.modified = n.modifiedAt
        i.staged = s
        return s
    }

    func write(_ fh: UInt64, _ data: UnsafeRawBufferPointer, offset: Int64) throws(FuseErrno) -> Int {
        let v = try gate.vault()
        let f = try handles.file(fh)
        guard f.writable else { throw FuseErrno(EBADF) }
        let s = try stage(f.inode, v)
        try s.write(data, at: f.append ? s.count : Int(offset))
        f.inode.modifiedOverride = nil
        return data.count
    }

    /// Commits the inode's staged content when it changed: a new sealed version, durable when
    /// this returns (the blob is fsynced before the metadata that names it commits).
    func commit(_ i: InodeTable.Inode) throws(FuseErrno) {
        guard let s = i.staged, s.dirty else { return }
        let v = try gate.vault(write: true)
        do {
            _ = try v.replaceContent(of: i.nodeId, size: UInt64(s.count), keepPrevious: !i.freshlyCreated) { emit in
                let all = s.bytes
                var at = 0
                while at < all.count {
                    let end = min(all.count, at + (1 << 20))
                    try emit(UnsafeRawBufferPointer(rebasing: all[at..<end]))
                    at = end
                }
            }
            s.dirty = false
            i.servedBlob = nil
            i.freshlyCreated = false
            if let t = i.modifiedOverride, try v.setModifiedTime(of: i.nodeId, to: t) { i.modifiedOverride = nil }
        } catch let e as VaultError where e.kind == .notFound {
            s.dirty = false   // unlinked while open: its writes go with it, as on any filesystem
        } catch {
            let e = FuseErrno(error, doing: "committing \(i.nodeId)")
            log(e.reason ?? "a commit failed")
            throw e
        }
    }

    func flush(_ fh: UInt64) throws(FuseErrno) { try commit(try handles.file(fh).inode) }

    /// Inodes closed while the vault was locked with changes not yet committed: their staged
    /// content stays in memory and is committed once the vault is unlocked (`commitPending`).
    private var pending: [UInt64: InodeTable.Inode] = [:]

    func release(_ fh: UInt64) throws(FuseErrno) {
        guard let last = handles.removeFile(fh) else { return }
        do throws(FuseErrno) { try commit(last.inode) } catch {
            if error.code == EACCES, last.inode.staged?.dirty == true {
                pending[last.inode.ino] = last.inode   // locked: kept for the unlock, not lost
                log("\(last.inode.nodeId) was closed while the vault is locked: its changes are committed once it is unlocked")
                return
            }
            dropStaged(last.inode)
            throw error
        }
        dropStaged(last.inode)
    }

    private func dropStaged(_ i: InodeTable.Inode) {
        guard i.openCount == 0 else { return }
        i.staged?.release(); i.staged = nil
        pending[i.ino] = nil
    }

    /// Commits the changes of files closed while the vault was locked (after `vault unlock`, and
    /// at unmount).
    func commitPending() {
        for i in Array(pending.values) {
            do throws(FuseErrno) {
                try commit(i)
                pending[i.ino] = nil
                dropStaged(i)
            } catch { log("\(i.nodeId): changes still not committed: \(error.reason ?? "errno \(error.code)")") }
        }
    }

    func create(_ parent: UInt64, _ name: String, flags: Int32) throws(FuseErrno) -> (InodeAttributes, UInt64) {
        if readOnly { throw FuseErrno(EROFS) }
        let v = try gate.vault(write: true)
        let p = try folder(parent, v)
        if let existing = try child(p, name, v) {
            if flags & O_EXCL != 0 { throw FuseErrno(EEXIST) }
            let i = inodes.inode(forNode: existing.id)
            let fh = try open(i.ino, flags: flags).handle
            return (attributes(existing, i), fh)
        }
        let n: Node
        do { n = try v.createFile(in: p.id, named: name, size: 0) { _ in } } catch { throw FuseErrno(error, doing: "creating in \(p.id)") }
        let i = inodes.inode(forNode: n.id)
        i.freshlyCreated = true
        let access = flags & O_ACCMODE
        let f = HandleTable.OpenFile(inode: i, writable: access != O_RDONLY, append: flags & O_APPEND != 0)
        if i.staged == nil { i.staged = StagedContent(modified: n.modifiedAt) }
        return (attributes(n, i), handles.add(f))
    }

    func setattr(_ ino: UInt64, toSet: Int32, size: UInt64, mtime: Int64) throws(FuseErrno) -> InodeAttributes {
        let v = try gate.vault(write: true)
        let i = try inodes.inode(ino)
        let n = try node(i, v)
        if toSet & (1 << 3) != 0 {   // FUSE_SET_ATTR_SIZE
            if readOnly { throw FuseErrno(EROFS) }
            guard !n.isFolder else { throw FuseErrno(EISDIR) }
            guard size <= UInt64(StagedContent.limit) else { throw FuseErrno(EFBIG) }
            let s = try stage(i, v)
            if UInt64(s.count) != size { try s.truncate(Int(size)) }
            if i.openCount == 0 {   // truncate(2) on a closed file: commit now
                defer { dropStaged(i) }
                try commit(i)
            }
        }
        if toSet & (1 << 5) != 0 { i.modifiedOverride = mtime }                              // FUSE_SET_ATTR_MTIME
        if toSet & (1 << 8) != 0 { i.modifiedOverride = Int64(Date().timeIntervalSince1970) } // FUSE_SET_ATTR_MTIME_NOW
        if let t = i.modifiedOverride, i.staged?.dirty != true, !readOnly {
            // Stored while the new content awaits upload (it travels with it); otherwise kept
            // for this mount only (docs/mount.md).
            do { if try v.setModifiedTime(of: i.nodeId, to: t) { i.modifiedOverride = nil } } catch {
                throw FuseErrno(error, doing: "setting the time of \(i.nodeId)")
            }
        }
        // Mode, owner and atime: the vault keeps none of them (files 0600, folders 0700).
        return attributes(try node(i, v), i)
    }

    // MARK: Tree changes

    func path(_ n: Node, _ v: Vault) throws(FuseErrno) -> String {
        do { return try v.path(of: n) } catch { throw FuseErrno(error, doing: "the path of \(n.id)") }
    }

    static func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

    func mkdir(_ parent: UInt64, _ name: String) throws(FuseErrno) -> InodeAttributes {
        if readOnly { throw FuseErrno(EROFS) }
        let v = try gate.vault(write: true)
        let p = try folder(parent, v)
        if try child(p, name, v) != nil { throw FuseErrno(EEXIST) }
        let n: Node
        do { n = try v.mkdir(Self.join(try path(p, v), name)) } catch { throw FuseErrno(error, doing: "mkdir in \(p.id)") }
        return attributes(n, inodes.inode(forNode: n.id))
    }

    /// unlink (`folder` false) and rmdir (`folder` true).
    func remove(_ parent: UInt64, _ name: String, folder wantFolder: Bool) throws(FuseErrno) {
        if readOnly { throw FuseErrno(EROFS) }
        let v = try gate.vault(write: true)
        let p = try folder(parent, v)
        guard let n = try child(p, name, v) else { throw FuseErrno(ENOENT) }
        if wantFolder && !n.isFolder { throw FuseErrno(ENOTDIR) }
        if !wantFolder && n.isFolder { throw FuseErrno(EISDIR) }
        if wantFolder, try !isEmpty(n, v) { throw FuseErrno(ENOTEMPTY) }
        do { try v.remove(try path(n, v)) } catch { throw FuseErrno(error, doing: "removing \(n.id)") }
    }

    func isEmpty(_ folder: Node, _ v: Vault) throws(FuseErrno) -> Bool {
        do { return try v.children(of: folder.id).isEmpty } catch { throw FuseErrno(error, doing: "listing \(folder.id)") }
    }

    /// rename(2): also over an existing file (or an empty folder, for a folder); flags
    /// RENAME_NOREPLACE is honoured, RENAME_EXCHANGE is EINVAL.
    func rename(_ parent: UInt64, _ name: String, _ newParent: UInt64, _ newName: String, flags: UInt32) throws(FuseErrno) {
        if readOnly { throw FuseErrno(EROFS) }
        if flags & 2 != 0 { throw FuseErrno(EINVAL, "RENAME_EXCHANGE is not supported") }
        let v = try gate.vault(write: true)
        let from = try folder(parent, v), to = try folder(newParent, v)
        guard let n = try child(from, name, v) else { throw FuseErrno(ENOENT) }
        if let target = try child(to, newName, v) {
            if target.id == n.id { return }
            if flags & 1 != 0 { throw FuseErrno(EEXIST) }
            if n.isFolder && !target.isFolder { throw FuseErrno(ENOTDIR) }
            if !n.isFolder && target.isFolder { throw FuseErrno(EISDIR) }
            if target.isFolder, try !isEmpty(target, v) { throw FuseErrno(ENOTEMPTY) }
            do { try v.remove(try path(target, v)) } catch { throw FuseErrno(error, doing: "replacing \(target.id)") }
        }
        do { _ = try v.move(try path(n, v), to: Self.join(try path(to, v), newName)) } catch { throw FuseErrno(error, doing: "moving \(n.id)") }
    }

    func fsync(_ fh: UInt64) throws(FuseErrno) { try commit(try handles.file(fh).inode) }

    func statfs() throws(FuseErrno) -> (blockSize: UInt64, blocks: UInt64, free: UInt64) {
        let v = try gate.vault()
        var s = statvfs()
        guard statvfs(v.layout.root, &s) == 0 else { throw FuseErrno(EIO, "statvfs of the vault folder failed") }
        return (UInt64(s.f_frsize), UInt64(s.f_blocks), UInt64(s.f_bavail))
    }

    // MARK: Locking

    /// The vault locked: no open file keeps a key (its blob reader is dropped; it reopens after
    /// `vault unlock`). Staged writes stay in memory, to commit at the next close or fsync once
    /// unlocked (or, for a file closed while locked, at the unlock: `commitPending`).
    func dropReaders() {
        for f in handles.openFiles { f.blob = nil }
        inodes.forEach { $0.servedBlob = nil }
    }

    /// Commits every staged change (at unmount), logging what could not be.
    func commitAll() {
        commitPending()
        for f in handles.openFiles {
            do throws(FuseErrno) { try commit(f.inode) } catch { log("not committed at unmount: \(f.inode.nodeId): \(error.reason ?? "")") }
        }
    }
}
