import Foundation
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Reading: content from the sealed blob, segment by segment, each only once it authenticates.
extension MountFilesystem {
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
            try emptied(i, n, v).truncate(0)
        } else if i.staged == nil && access != O_WRONLY {
            if isOnDemand(n) && !writable { try openRemote(i, n, v) } else { f.blob = try openBlob(n, v) }
        } else if i.staged == nil && !isOnDemand(n) {
            // Write-only: the content is loaded at the first write; the blob opened now keeps it
            // loadable should the file be removed before then (unlink while open).
            f.blob = try? v.openContent(n)
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
            if s.stream != nil { try spill(s, v) }
            try s.read(at: Int(offset), size: size, reply)
            return
        }
        if f.blob == nil {
            let n: Node
            do { n = try node(f.inode, v) } catch {
                // Removed while open: the handle reads on from the partial it opened.
                guard error.code == ENOENT, f.inode.remote != nil else { throw error }
                f.inode.removedWhileOpen = true
                try readRemote(f, size: size, offset: offset, v, reply)
                return
            }
            if isOnDemand(n) {
                if f.inode.remote == nil { try openRemote(f.inode, n, v) }
                try readRemote(f, size: size, offset: offset, v, reply)
                return
            }
            f.blob = try openBlob(n, v)
        }
        let blob = f.blob!
        let total = blob.plaintextSize
        guard UInt64(offset) < total else { reply(UnsafeRawBufferPointer(start: nil, count: 0)); return }
        let count = Int(min(UInt64(size), total - UInt64(offset)))
        // Each read that crosses into a new readahead window asks for the window after it.
        if Int(offset % Self.readaheadWindow) < count {
            blob.willNeed(offset: UInt64(offset) + UInt64(Self.readaheadWindow), length: UInt64(Self.readaheadWindow))
        }
        let buffer = replyBuffer(holding: count)
        do {
            try buffer.withUnsafeMutableBytes { b in
                let n = try blob.read(offset: UInt64(offset), into: UnsafeMutableRawBufferPointer(rebasing: b[..<count]))
                reply(UnsafeRawBufferPointer(rebasing: b[..<n]))
            }
        } catch {
            let e = FuseErrno(error, doing: "reading \(f.inode.nodeId) at \(offset)")
            log(e.reason ?? "a read failed")
            throw e
        }
    }

    /// How far ahead of a reader of local content the blob's sealed bytes are asked for.
    static let readaheadWindow: Int64 = 4 << 20
}
