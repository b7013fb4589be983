import CFuseShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One FUSE request: every handler replies to it exactly once, with one of these.
struct FuseRequest {
    let raw: CFuseShims_Req

    func fail(_ e: FuseErrno) { _ = CFuseShims_reply_err(raw, e.code) }
    func ok() { _ = CFuseShims_reply_err(raw, 0) }
    func entry(_ a: InodeAttributes) { var c = a.packed; _ = CFuseShims_reply_entry(raw, &c, a.timeout) }
    func attributes(_ a: InodeAttributes) { var c = a.packed; _ = CFuseShims_reply_attr(raw, &c, a.timeout) }
    func bytes(_ b: UnsafeRawBufferPointer) { _ = CFuseShims_reply_buf(raw, b.baseAddress, b.count) }
    func written(_ n: Int) { _ = CFuseShims_reply_write(raw, n) }
    func opened(_ fi: CFuseShims_FileInfo, handle: UInt64, keepCache: Bool = false) {
        _ = CFuseShims_reply_open(raw, fi, handle, keepCache ? 1 : 0, 0)
    }
    func created(_ a: InodeAttributes, _ fi: CFuseShims_FileInfo, handle: UInt64) {
        var c = a.packed
        _ = CFuseShims_reply_create(raw, &c, a.timeout, fi, handle)
    }
    func statfs(blockSize: UInt64, blocks: UInt64, free: UInt64, files: UInt64) {
        _ = CFuseShims_reply_statfs(raw, blockSize, blocks, free, files, 255)
    }
}

/// What the kernel is told about one inode.
struct InodeAttributes {
    var ino: UInt64
    var isFolder: Bool
    var size: UInt64
    var modified: Int64
    /// Seconds the kernel may cache the attributes and the entry: the mount drops them itself
    /// within about a second of a change beside it (`MountFilesystem.changesBeside`); the
    /// timeout only bounds a change the database's stamp could not show.
    var timeout: Double = Self.cacheSeconds
    static let cacheSeconds: Double = 30
    /// Hard links: 2 for a folder, 1 for a file, 0 for a file removed while open.
    var links: UInt32

    init(ino: UInt64, isFolder: Bool, size: UInt64, modified: Int64) {
        self.ino = ino; self.isFolder = isFolder; self.size = size; self.modified = modified
        links = isFolder ? 2 : 1
    }

    /// Files 0600 and folders 0700, owned by the mounting user: the vault keeps no mode bits.
    var mode: UInt32 { isFolder ? UInt32(S_IFDIR) | 0o700 : UInt32(S_IFREG) | 0o600 }

    var packed: CFuseShims_Attr {
        CFuseShims_Attr(ino: ino, mode: mode, nlink: links, size: size, mtime_sec: modified, mtime_nsec: 0,
                        uid: getuid(), gid: getgid())
    }
}

/// The mounted session: the /dev/fuse channel, one request at a time.
final class FuseChannel {
    let session: OpaquePointer
    let mountpoint: String

    /// Mounts `handlers` at `mountpoint`.
    /// - Throws: `VaultError(.io)` when libfuse cannot create the session or mount it.
    init(handlers: CFuseShims_Handlers, mountpoint: String, fsname: String, readOnly: Bool) throws {
        var h = handlers
        guard let se = CFuseShims_session_new(&h, fsname, readOnly ? 1 : 0) else {
            throw MountProblem.session("libfuse could not create a session")
        }
        guard CFuseShims_mount(se, mountpoint) == 0 else {
            CFuseShims_session_destroy(se)
            throw MountProblem.session("cannot mount at \(mountpoint) (is /dev/fuse there, and fusermount3 installed?)")
        }
        session = se
        self.mountpoint = mountpoint
    }

    var fd: Int32 { CFuseShims_fd(session) }

    /// Handles one request; false once the filesystem was unmounted.
    func processOne() -> Bool { CFuseShims_process_one(session) >= 0 }

    /// Drops the kernel's page cache and attributes of `inodes` (on another thread: the kernel
    /// may wait for a read this loop has yet to answer).
    func invalidate(_ inodes: [UInt64]) { invalidate(entries: [], inodes: inodes) }

    /// Drops the kernel's cached `entries` (a name in a folder inode), then the page cache and
    /// attributes of `inodes`, on another thread (as `invalidate(_:)`).
    func invalidate(entries: [(parent: UInt64, name: String)], inodes: [UInt64]) {
        let se = SessionPointer(raw: session)
        let names = entries.map { NameInFolder(parent: $0.parent, name: $0.name) }
        invalidating.enter()
        Thread.detachNewThread { [invalidating] in
            for e in names { _ = CFuseShims_invalidate_entry(se.raw, e.parent, e.name) }
            for ino in inodes { _ = CFuseShims_invalidate_inode(se.raw, ino) }
            invalidating.leave()
        }
    }

    /// Waits up to `seconds` for the invalidations under way: usually they are done in far less,
    /// but one may wait for a read this loop has yet to answer, so the wait is bounded.
    func waitForInvalidations(upTo seconds: Double) { _ = invalidating.wait(timeout: .now() + seconds) }

    /// Invalidations under way (the session is freed only once they are done).
    private let invalidating = DispatchGroup()

    /// Unmounts (when still mounted) and frees the session, once no invalidation uses its
    /// descriptor (waiting at most 2 s: one may wait for a read this loop no longer answers).
    func end() {
        _ = invalidating.wait(timeout: .now() + 2)
        CFuseShims_session_unmount(session)
        CFuseShims_session_destroy(session)
    }
}

/// The session pointer, passed to the invalidating thread (libfuse's notify calls may run on
/// any thread).
private struct SessionPointer: @unchecked Sendable { let raw: OpaquePointer }

private struct NameInFolder: Sendable { let parent: UInt64; let name: String }
