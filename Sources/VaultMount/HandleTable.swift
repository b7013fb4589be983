import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// The open files and folders of the mount, by the handle number the kernel passes back. An
/// open file is never evicted: its blob stays open (readable after an unlink) and its staged
/// content stays in memory until the last handle on the inode is released.
final class HandleTable {
    /// One open file.
    final class OpenFile {
        let inode: InodeTable.Inode
        let writable: Bool
        let append: Bool
        /// The authenticated reader of the content as of the open (dropped when the vault locks).
        var blob: BlobHandle?
        /// Where the next sequential read would start (reads there prefetch ahead).
        var nextOffset: UInt64 = 0

        init(inode: InodeTable.Inode, writable: Bool, append: Bool) {
            self.inode = inode; self.writable = writable; self.append = append
        }
    }

    /// One open folder: its entries and their attributes as of the opendir.
    struct OpenFolder {
        var entries: [(name: String, attributes: InodeAttributes)]
    }

    private var files: [UInt64: OpenFile] = [:]
    private var folders: [UInt64: OpenFolder] = [:]
    private var next: UInt64 = 1

    func add(_ f: OpenFile) -> UInt64 {
        let fh = next; next += 1
        files[fh] = f
        f.inode.openCount += 1
        return fh
    }

    func add(_ d: OpenFolder) -> UInt64 {
        let fh = next; next += 1
        folders[fh] = d
        return fh
    }

    func file(_ fh: UInt64) throws(FuseErrno) -> OpenFile {
        guard let f = files[fh] else { throw FuseErrno(EBADF, "unknown file handle \(fh)") }
        return f
    }

    func folder(_ fh: UInt64) throws(FuseErrno) -> OpenFolder {
        guard let d = folders[fh] else { throw FuseErrno(EBADF, "unknown folder handle \(fh)") }
        return d
    }

    /// Forgets handle `fh`; returns the file when it was the inode's last open handle.
    func removeFile(_ fh: UInt64) -> OpenFile? {
        guard let f = files.removeValue(forKey: fh) else { return nil }
        f.inode.openCount -= 1
        return f.inode.openCount == 0 ? f : nil
    }

    func removeFolder(_ fh: UInt64) { folders[fh] = nil }

    var openFiles: [OpenFile] { Array(files.values) }

    /// A blob one of the open handles of `inode` holds (the content as of their open).
    func blob(of inode: InodeTable.Inode) -> BlobHandle? {
        files.values.first { $0.inode.ino == inode.ino && $0.blob != nil }?.blob
    }
}
