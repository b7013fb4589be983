import Foundation
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Writing: content staged sealed on disk (`StagedContent`), committed as a new sealed version
/// on close or fsync.
extension MountFilesystem {
    /// The inode's staged content, loaded from its authenticated current content on first use.
    func stage(_ i: InodeTable.Inode, _ v: Vault) throws(FuseErrno) -> StagedContent {
        if let s = i.staged { return s }
        let n: Node
        do { n = try node(i, v) } catch {
            guard error.code == ENOENT, i.openCount > 0 else { throw error }
            return try stageRemovedWhileOpen(i, v)
        }
        guard n.size <= UInt64(StagedContent.limit) else { throw FuseErrno(EFBIG, "\(n.id) is larger than the mount can rewrite") }
        return try loadStaging(i, modified: n.modifiedAt, v, doing: "loading \(n.id) to change it") { body in
            if n.size > 0 { _ = try v.readContent(n, body) }
        }
    }

    /// A new staging for `i`, filled from `source` (its authenticated content), made `i.staged`;
    /// on a failure it is dropped and the reason logged.
    private func loadStaging(_ i: InodeTable.Inode, modified: Int64, _ v: Vault, doing what: String,
                             _ source: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws(FuseErrno) -> StagedContent {
        let s = try StagedContent(folder: v.layout.tempDirectory, modified: modified)
        do { try s.fill(from: source) } catch {
            s.release()
            let e = FuseErrno(error, doing: what)
            log(e.reason ?? "loading failed")
            throw e
        }
        s.dirty = false
        s.modified = modified
        i.staged = s
        return s
    }

    /// The staged content of a file removed while handles are open on it (an unlink, a rename
    /// over it, a pull): loaded from the blob a handle opened before the removal, which stays
    /// readable, as on any filesystem. ENOENT only when no handle holds one (the file was not
    /// here when it was opened, or the vault locked since).
    private func stageRemovedWhileOpen(_ i: InodeTable.Inode, _ v: Vault) throws(FuseErrno) -> StagedContent {
        if let s = i.staged { return s }
        guard let blob = handles.blob(of: i), let seen = i.seen else {
            throw FuseErrno(ENOENT, "\(i.nodeId) was removed before its content was read through this handle")
        }
        guard blob.plaintextSize <= UInt64(StagedContent.limit) else { throw FuseErrno(EFBIG, "\(i.nodeId) is larger than the mount can rewrite") }
        return try loadStaging(i, modified: i.modifiedOverride ?? seen.modified, v,
                               doing: "loading \(i.nodeId), removed while open, to change it") { try blob.stream($0) }
    }

    /// The inode's staged content for a truncation to zero: what it held is not loaded (so a
    /// file of any size can be emptied). Dirty when the file had content.
    func emptied(_ i: InodeTable.Inode, _ n: Node, _ v: Vault) throws(FuseErrno) -> StagedContent {
        if let s = i.staged { return s }
        let s = try StagedContent(folder: v.layout.tempDirectory, modified: n.modifiedAt)
        if n.size > 0 { s.dirty = true }
        i.staged = s
        return s
    }

    /// A write the mount replied to: `count` bytes taken, and for an append to streamed content
    /// the staging that seals them after the reply (`sealAfterReply`).
    struct AcceptedWrite {
        let count: Int
        let sealing: StagedContent?
    }

    /// Takes a write of `data` at `offset` (the end, for an `O_APPEND` handle). Everything that
    /// can refuse it (EBADF, EFBIG, ENOSPC, a lock) is checked here, before the reply; an
    /// append to streamed content is sealed by `sealAfterReply` once the kernel has the reply,
    /// so that the writer's next request is made while the bytes seal (docs/mount.md "Writing").
    func write(_ fh: UInt64, _ data: UnsafeRawBufferPointer, offset: Int64) throws(FuseErrno) -> AcceptedWrite {
        let v = try gate.vault()
        let f = try handles.file(fh)
        guard f.writable else { throw FuseErrno(EBADF) }
        let s = try stage(f.inode, v)
        let at = f.append ? s.count : Int(offset)
        if s.stream != nil && at != s.count { try spill(s, v) }
        if s.isPristine && at == 0 && !data.isEmpty, let stream = try? v.beginContent() { s.startStream(stream) }
        if s.stream != nil {
            // Nothing is staged to fall back on: a full disk is ENOSPC before the stream takes a byte.
            do { try v.requireFreeSpace(forSealing: UInt64(data.count), doing: "write \(f.inode.nodeId)") } catch {
                throw FuseErrno(error, doing: "writing \(f.inode.nodeId)")
            }
        }
        f.inode.modifiedOverride = nil
        if s.stream != nil {
            try s.acceptAppend(data.count, at: at)
            return AcceptedWrite(count: data.count, sealing: s)
        }
        try s.write(data, at: at)
        return AcceptedWrite(count: data.count, sealing: nil)
    }

    /// Seals the bytes of an accepted append (the same `data`, still in libfuse's buffer until
    /// the next request is read); a failure is logged and reported by the next operation on the
    /// file (a write, `fsync` or `close`).
    func sealAfterReply(_ w: AcceptedWrite, _ data: UnsafeRawBufferPointer) {
        guard let s = w.sealing else { return }
        s.sealAccepted(data)
        if let e = s.failure { log("a write was not sealed: \(e.reason ?? "errno \(e.code)"); the next write, fsync or close of the file reports it") }
    }

    /// Staged content that streams goes into the staging before anything but an append.
    func spill(_ s: StagedContent, _ v: Vault) throws(FuseErrno) {
        guard let stream = s.stream else { return }
        let blob: BlobHandle
        do { blob = try v.reopen(stream) } catch { throw FuseErrno(error, doing: "reading back the content written so far") }
        try s.spill(from: blob)
    }

    /// Commits the inode's staged content when it changed: a new sealed version, durable when
    /// this returns (the blob is fsynced before the metadata that names it commits).
    func commit(_ i: InodeTable.Inode) throws(FuseErrno) {
        guard let s = i.staged, s.dirty else { return }
        let v = try gate.vault(write: true)
        do {
            if let stream = s.stream, v.isCurrent(stream) {
                try v.replaceContent(of: i.nodeId, streamed: stream, keepPrevious: !i.freshlyCreated)
                s.release(); i.staged = nil   // the content is the vault's now: the next change loads it
            } else {
                try spill(s, v)               // a stream sealed before a key rotation: sealed again here
                _ = try v.replaceContent(of: i.nodeId, size: UInt64(s.count), keepPrevious: !i.freshlyCreated) { emit in
                    try s.forEachSegment(emit)
                }
            }
            s.dirty = false
            i.servedBlob = nil
            i.freshlyCreated = false
            if let t = i.modifiedOverride, try v.setModifiedTime(of: i.nodeId, to: t) { i.modifiedOverride = nil }
        } catch let e as VaultError where e.kind == .notFound {
            s.dirty = false   // unlinked while open: its writes go with it, as on any filesystem
        } catch let e as FuseErrno where s.failure != nil {
            // Writes that did not seal: reported once, and the file goes on from its committed content.
            s.release(); i.staged = nil
            log("\(i.nodeId): changes not committed: \(e.reason ?? "errno \(e.code)")")
            throw e
        } catch {
            let e = FuseErrno(error, doing: "committing \(i.nodeId)")
            log(e.reason ?? "a commit failed")
            throw e
        }
    }

    func flush(_ fh: UInt64) throws(FuseErrno) { try commit(try handles.file(fh).inode) }


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
        i.remote?.cancel(); i.remote = nil
        if i.removedWhileOpen { i.removedWhileOpen = false; i.seen = nil }   // the last handle of a removed file
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
            return (entry(existing, in: parent), fh)
        }
        let n: Node
        do { n = try v.createFile(in: p.id, named: name, size: 0) { _ in } } catch { throw FuseErrno(error, doing: "creating in \(p.id)") }
        let i = inodes.inode(forNode: n.id)
        i.entry = (parent, n.name)
        i.freshlyCreated = true
        let access = flags & O_ACCMODE
        let f = HandleTable.OpenFile(inode: i, writable: access != O_RDONLY, append: flags & O_APPEND != 0)
        if i.staged == nil { i.staged = try StagedContent(folder: v.layout.tempDirectory, modified: n.modifiedAt) }
        return (attributes(n, i), handles.add(f))
    }

    func setattr(_ ino: UInt64, toSet: Int32, size: UInt64, mtime: Int64) throws(FuseErrno) -> InodeAttributes {
        let v = try gate.vault(write: true)
        let i = try inodes.inode(ino)
        let n: Node
        do { n = try node(i, v) } catch {
            guard error.code == ENOENT, i.openCount > 0 else { throw error }
            return try setattrRemovedWhileOpen(i, v, toSet: toSet, size: size, mtime: mtime)
        }
        if toSet & (1 << 3) != 0 {   // FUSE_SET_ATTR_SIZE
            if readOnly { throw FuseErrno(EROFS) }
            guard !n.isFolder else { throw FuseErrno(EISDIR) }
            guard size <= UInt64(StagedContent.limit) else { throw FuseErrno(EFBIG) }
            let s = size == 0 ? try emptied(i, n, v) : try stage(i, v)
            if s.stream != nil && size != 0 && UInt64(s.count) != size { try spill(s, v) }
            if UInt64(s.count) != size { try s.truncate(Int(size)) }
            if i.openCount == 0 {   // truncate(2) on a closed file: commit now
                defer { dropStaged(i) }
                try commit(i)
            }
        }
        setTime(i, toSet: toSet, mtime: mtime)
        if let t = i.modifiedOverride, i.staged?.dirty != true, !readOnly {
            // Stored in the vault: with the new content awaiting upload, or as a move to where
            // the file is, which sync carries (docs/mount.md "Writing").
            do { if try v.setModifiedTime(of: i.nodeId, to: t) { i.modifiedOverride = nil } } catch {
                throw FuseErrno(error, doing: "setting the time of \(i.nodeId)")
            }
        }
        // Mode, owner and atime: the vault keeps none of them (files 0600, folders 0700).
        return attributes(try node(i, v), i)
    }

    /// ftruncate and futimens on a file removed while open: they change what the open handles
    /// see (its staged content), and nothing of the vault, where the file is gone.
    private func setattrRemovedWhileOpen(_ i: InodeTable.Inode, _ v: Vault, toSet: Int32, size: UInt64, mtime: Int64) throws(FuseErrno) -> InodeAttributes {
        if toSet & (1 << 3) != 0 {
            guard size <= UInt64(StagedContent.limit) else { throw FuseErrno(EFBIG) }
            let s = size == 0 && i.staged == nil ? try removedEmptied(i, v) : try stageRemovedWhileOpen(i, v)
            if s.stream != nil && size != 0 && UInt64(s.count) != size { try spill(s, v) }
            if UInt64(s.count) != size { try s.truncate(Int(size)) }
        }
        setTime(i, toSet: toSet, mtime: mtime)
        guard let a = attributesRemovedWhileOpen(i) else { throw FuseErrno(ENOENT) }
        return a
    }

    /// An empty staging for a file removed while open (`ftruncate(fd, 0)`): needs no content.
    private func removedEmptied(_ i: InodeTable.Inode, _ v: Vault) throws(FuseErrno) -> StagedContent {
        let s = try StagedContent(folder: v.layout.tempDirectory, modified: i.modifiedOverride ?? i.seen?.modified ?? 0)
        i.staged = s
        return s
    }

    /// The modification time setattr asks for, kept on the inode; also what its staged content
    /// shows until it is closed (`touch` sets the time of a file it just created).
    private func setTime(_ i: InodeTable.Inode, toSet: Int32, mtime: Int64) {
        if toSet & (1 << 5) != 0 { i.modifiedOverride = mtime }                              // FUSE_SET_ATTR_MTIME
        if toSet & (1 << 8) != 0 { i.modifiedOverride = Int64(Date().timeIntervalSince1970) } // FUSE_SET_ATTR_MTIME_NOW
        if let t = i.modifiedOverride { i.staged?.modified = t }
    }
}
