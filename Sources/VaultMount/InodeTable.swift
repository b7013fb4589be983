import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// The vault's node ids and the inode numbers the kernel knows them by. Numbers are never
/// reused while mounted (the kernel may still name an inode it looked up long ago); the root
/// is inode 1. Staged content and open counts live on the inode, shared by its open handles.
final class InodeTable {
    final class Inode {
        let ino: UInt64
        let nodeId: String
        /// Content being written (see `StagedContent`), while a handle that wrote is open.
        var staged: StagedContent?
        /// Open file handles on this inode.
        var openCount = 0
        /// A modification time set through the mount (utimens) for this session.
        var modifiedOverride: Int64?
        /// The blob served at the last open: when the next open finds the same one, the kernel may
        /// keep the pages it cached (any change of content, here or pulled, is a new blob).
        var servedBlob: String?
        /// Created through the mount and not committed since: its empty first version is scratch.
        var freshlyCreated = false
        /// The content not on this device, fetched by segments on demand while the file is open
        /// (shared by its handles; dropped at the last close and when the vault locks).
        var remote: OnDemandContent?
        /// Its node is gone from the vault while handles are open on it: its complete partial
        /// stays the handles' content instead of becoming a cached blob, and the check after a
        /// change keeps what the kernel was told of it (`seen`) until its last handle closes.
        var removedWhileOpen = false
        /// Sealed bytes of `remote` already logged and fitted to the content budget.
        var remoteReported: UInt64 = 0

        /// The node as the kernel was last told of it (attributes, entry), to find what changed
        /// beside the mount (`MountFilesystem.changesBeside`); nil before the first reply.
        var seen: Seen?
        /// The name the kernel may have cached for this inode (lookup, listing, create, rename).
        var entry: (parent: UInt64, name: String)?
        /// When the kernel was last told of it (monotonic seconds): past the cache time it asks
        /// again, so a check after a change beside the mount skips it (unless open).
        var toldAt: Double = 0

        init(ino: UInt64, nodeId: String) { self.ino = ino; self.nodeId = nodeId }
    }

    /// What of a node's attributes the kernel caches (its name is the inode's `entry`), kept
    /// small: an inode of 100,000 listed holds no string of its own for it.
    struct Seen: Equatable {
        /// The inode of the folder it was in (where `changesBeside` looks for it first).
        var parentIno: UInt64?
        var size: UInt64
        var modified: Int64
        /// The hash of its blob id (nil: no content here).
        var blob: Int?
        var state: ContentState
    }

    static let rootIno: UInt64 = 1
    private var byIno: [UInt64: Inode] = [:]
    private var byNode: [String: UInt64] = [:]
    private var next: UInt64 = 2

    init() {
        let root = Inode(ino: Self.rootIno, nodeId: Vault.rootId)
        byIno[root.ino] = root; byNode[root.nodeId] = root.ino
    }

    /// The inode of node `id`, made on first sight.
    func inode(forNode id: String) -> Inode {
        if let ino = byNode[id], let i = byIno[ino] { return i }
        let i = Inode(ino: next, nodeId: id)
        next += 1
        byIno[i.ino] = i; byNode[id] = i.ino
        return i
    }

    /// The inode `ino`. Throws ESTALE for a number this mount never gave out.
    func inode(_ ino: UInt64) throws(FuseErrno) -> Inode {
        guard let i = byIno[ino] else { throw FuseErrno(ESTALE, "unknown inode \(ino)") }
        return i
    }

    /// Every inode number given out (to drop the kernel's caches of them).
    var all: [UInt64] { Array(byIno.keys) }

    /// The inode of node `id`, when the kernel was given one.
    func existing(forNode id: String) -> Inode? { byNode[id].flatMap { byIno[$0] } }

    func forEach(_ body: (Inode) -> Void) { byIno.values.forEach(body) }
}
