import Foundation
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Tree changes through `Vault.mkdir`, `Vault.move` and `Vault.remove`, as the commands make them.
extension MountFilesystem {
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
        return entry(n, in: parent)
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
        inodes.existing(forNode: n.id)?.entry = nil   // the kernel drops the name itself
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
            inodes.existing(forNode: target.id)?.entry = nil
        }
        let moved: Node
        do { moved = try v.move(try path(n, v), to: Self.join(try path(to, v), newName), keepingModifiedTime: true) } catch { throw FuseErrno(error, doing: "moving \(n.id)") }
        // The kernel moves its entry itself.
        _ = entry(moved, in: newParent)
    }

    func fsync(_ fh: UInt64) throws(FuseErrno) { try commit(try handles.file(fh).inode) }

    func statfs() throws(FuseErrno) -> (blockSize: UInt64, blocks: UInt64, free: UInt64) {
        let v = try gate.vault()
        var s = statvfs()
        guard statvfs(v.layout.root, &s) == 0 else { throw FuseErrno(EIO, "statvfs of the vault folder failed") }
        return (UInt64(s.f_frsize), UInt64(s.f_blocks), UInt64(s.f_bavail))
    }
}
