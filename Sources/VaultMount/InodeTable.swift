import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// The vault's node ids and the inode numbers the kernel knows them by. Numbers are never
/// reused while mounted (the kernel may still name an inode it looked up long ago); the root
/// is inode 1. Staged content and open counts live on the inode, shared by its open handles.
///
/// Kept compact, since a listing of the whole tree gives every node an inode: what every inode
/// has (its node id as 16 bytes, what the kernel was told) is one row of an array indexed by the
/// inode number (72 bytes), and its bucket in the index by node id (4 bytes, at most half full);
/// what only an opened or written inode has lives in side tables (`OpenState`, `served`).
final class InodeTable {
    /// One inode: its number, and the table that keeps its state. A value: every copy names the
    /// same inode, and setting a property through any copy sets it for all.
    struct Inode {
        let ino: UInt64
        fileprivate let table: InodeTable

        var nodeId: String { table.id(of: ino).string }

        /// Content being written (see `StagedContent`), while a handle that wrote is open.
        var staged: StagedContent? {
            get { table.open[ino]?.staged }
            nonmutating set { table.update(ino, creating: newValue != nil) { $0.staged = newValue } }
        }
        /// Open file handles on this inode.
        var openCount: Int {
            get { table.open[ino]?.openCount ?? 0 }
            nonmutating set { table.update(ino, creating: newValue != 0) { $0.openCount = newValue } }
        }
        /// A modification time set through the mount (utimens) for this session.
        var modifiedOverride: Int64? {
            get { table.open[ino]?.modifiedOverride }
            nonmutating set { table.update(ino, creating: newValue != nil) { $0.modifiedOverride = newValue } }
        }
        /// Created through the mount and not committed since: its empty first version is scratch.
        var freshlyCreated: Bool {
            get { table.open[ino]?.freshlyCreated ?? false }
            nonmutating set { table.update(ino, creating: newValue) { $0.freshlyCreated = newValue } }
        }
        /// The content not on this device, fetched by segments on demand while the file is open
        /// (shared by its handles; dropped at the last close and when the vault locks).
        var remote: OnDemandContent? {
            get { table.open[ino]?.remote }
            nonmutating set { table.update(ino, creating: newValue != nil) { $0.remote = newValue } }
        }
        /// Its node is gone from the vault while handles are open on it: its complete partial
        /// stays the handles' content instead of becoming a cached blob, and the check after a
        /// change keeps what the kernel was told of it (`seen`) until its last handle closes.
        var removedWhileOpen: Bool {
            get { table.open[ino]?.removedWhileOpen ?? false }
            nonmutating set { table.update(ino, creating: newValue) { $0.removedWhileOpen = newValue } }
        }
        /// Sealed bytes of `remote` already logged and fitted to the content budget.
        var remoteReported: UInt64 {
            get { table.open[ino]?.remoteReported ?? 0 }
            nonmutating set { table.update(ino, creating: newValue != 0) { $0.remoteReported = newValue } }
        }

        /// The blob served at the last open: when the next open finds the same one, the kernel may
        /// keep the pages it cached (any change of content, here or pulled, is a new blob).
        var servedBlob: String? {
            get { table.served[UInt32(ino)]?.string }
            nonmutating set { table.served[UInt32(ino)] = newValue.map(CompactID.init) }
        }
        /// The node as the kernel was last told of it (attributes, entry), to find what changed
        /// beside the mount (`MountFilesystem.changesBeside`); nil before the first reply.
        var seen: Seen? {
            get { table.rows[table.index(ino)].seen }
            nonmutating set { table.rows[table.index(ino)].seen = newValue }
        }
        /// The name the kernel may have cached for this inode (lookup, listing, create, rename).
        var entry: (parent: UInt64, name: String)? {
            get { table.rows[table.index(ino)].entry }
            nonmutating set { table.rows[table.index(ino)].entry = newValue }
        }
        /// When the kernel was last told of it (monotonic seconds): past the cache time it asks
        /// again, so a check after a change beside the mount skips it (unless open).
        var toldAt: Double {
            get { Double(table.rows[table.index(ino)].toldAt) / 10 }
            // In tenths of a second, rounded up: never earlier than it was.
            nonmutating set { table.rows[table.index(ino)].toldAt = UInt32(clamping: Int((newValue * 10).rounded(.up))) }
        }
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

    /// An id as the vault spells it, stored as its 16 bytes when it is 32 lowercase hex digits
    /// (every node and blob id the vault makes), else as the text itself.
    enum CompactID: Hashable {
        case hex(PackedID)
        case text(String)

        init(_ s: String) { self = PackedID(s).map { .hex($0) } ?? .text(s) }

        var string: String {
            switch self {
            case .text(let s): return s
            case .hex(let p): return p.string
            }
        }
    }

    /// What every inode has, in 72 bytes: its node id (a vault id's 16 bytes, else `textIds`), what
    /// the kernel was told of it (`Seen`, flattened) and its cached name.
    fileprivate struct Row {
        private var packed = PackedID(hi: 0, lo: 0)
        private var size: UInt64 = 0
        private var modified: Int64 = 0
        private var blob: Int = 0
        private var name: String = ""
        private var parentIno: UInt32 = 0
        private var entryParent: UInt32 = 0
        /// Tenths of a monotonic second.
        var toldAt: UInt32 = 0
        private var flags: UInt8 = 0
        private var stateCode: UInt8 = 0

        private static let hasSeen: UInt8 = 1, hasParent: UInt8 = 2, hasBlob: UInt8 = 4, hasEntry: UInt8 = 8, textId: UInt8 = 16
        private static let states: [ContentState] = [.notDownloaded, .downloading, .local, .stale]

        init(_ id: CompactID) {
            switch id {
            case .hex(let p): packed = p
            case .text: flags = Self.textId
            }
        }

        /// The id when it is a vault id (nil: it is in `textIds`).
        var packedId: PackedID? { flags & Self.textId == 0 ? packed : nil }

        var seen: Seen? {
            get {
                guard flags & Self.hasSeen != 0 else { return nil }
                return Seen(parentIno: flags & Self.hasParent != 0 ? UInt64(parentIno) : nil, size: size, modified: modified,
                            blob: flags & Self.hasBlob != 0 ? blob : nil, state: Self.states[Int(stateCode)])
            }
            set {
                flags &= ~(Self.hasSeen | Self.hasParent | Self.hasBlob)
                guard let n = newValue else { return }
                flags |= Self.hasSeen
                if let p = n.parentIno { parentIno = UInt32(p); flags |= Self.hasParent }
                if let b = n.blob { blob = b; flags |= Self.hasBlob }
                size = n.size; modified = n.modified
                stateCode = UInt8(Self.states.firstIndex(of: n.state)!)
            }
        }

        var entry: (parent: UInt64, name: String)? {
            get { flags & Self.hasEntry != 0 ? (UInt64(entryParent), name) : nil }
            set {
                if let e = newValue { entryParent = UInt32(e.parent); name = e.name; flags |= Self.hasEntry }
                else { name = ""; flags &= ~Self.hasEntry }
            }
        }
    }

    /// What only an inode that was opened, written or set has (see `Inode`).
    fileprivate final class OpenState {
        var staged: StagedContent?
        var openCount = 0
        var modifiedOverride: Int64?
        var freshlyCreated = false
        var remote: OnDemandContent?
        var removedWhileOpen = false
        var remoteReported: UInt64 = 0

        var isIdle: Bool {
            staged == nil && openCount == 0 && modifiedOverride == nil && !freshlyCreated && remote == nil
                && !removedWhileOpen && remoteReported == 0
        }
    }

    static let rootIno: UInt64 = 1
    /// Row `ino - 1` is inode `ino` (inode numbers fit 32 bits: one is given per node seen).
    fileprivate var rows: [Row] = []
    fileprivate var open: [UInt64: OpenState] = [:]
    /// The blob served at an inode's last open (see `Inode.servedBlob`), only for inodes opened.
    fileprivate var served: [UInt32: CompactID] = [:]
    /// Ids that are not vault ids (the root's), by inode.
    private var textIds: [UInt32: String] = [:]
    /// Inodes by node id. A vault id's inode is found by open addressing over `slots` (inode
    /// numbers, 0 empty; at most half full: 4 bytes a bucket, where a `Dictionary` keyed by the
    /// id would take 20 and keep a quarter to a half empty), hashed with the process's random
    /// seed (ids a server chose cannot be made to collide); any other id by its text.
    private var slots = [UInt32](repeating: 0, count: 1024)
    private var hexCount = 0
    private var byText: [String: UInt32] = [:]

    private func firstSlot(_ p: PackedID, mask: Int) -> Int { p.hashValue & mask }

    private func lookup(_ key: CompactID) -> UInt32? {
        switch key {
        case .text(let s): return byText[s]
        case .hex(let p):
            let mask = slots.count - 1
            var k = firstSlot(p, mask: mask)
            while slots[k] != 0 {
                if rows[Int(slots[k]) - 1].packedId == p { return slots[k] }
                k = (k + 1) & mask
            }
            return nil
        }
    }

    private func insert(_ ino: UInt32, _ p: PackedID) {
        if (hexCount + 1) * 2 > slots.count {
            slots = [UInt32](repeating: 0, count: slots.count * 2)
            for (n, r) in rows.enumerated() where n + 1 != Int(ino) {
                if let q = r.packedId { place(UInt32(n + 1), q) }
            }
        }
        place(ino, p)
        hexCount += 1
    }

    private func place(_ ino: UInt32, _ p: PackedID) {
        let mask = slots.count - 1
        var k = firstSlot(p, mask: mask)
        while slots[k] != 0 { k = (k + 1) & mask }
        slots[k] = ino
    }

    init() {
        _ = inode(forNode: Vault.rootId)
    }

    fileprivate func index(_ ino: UInt64) -> Int { Int(ino - 1) }

    fileprivate func id(of ino: UInt64) -> CompactID {
        rows[index(ino)].packedId.map { .hex($0) } ?? .text(textIds[UInt32(ino)]!)
    }

    /// Changes the side state of `ino` (made first when `creating`; dropped once nothing is left in it).
    fileprivate func update(_ ino: UInt64, creating: Bool, _ change: (OpenState) -> Void) {
        let s: OpenState
        if let had = open[ino] { s = had } else if creating { s = OpenState(); open[ino] = s } else { return }
        change(s)
        if s.isIdle { open[ino] = nil }
    }

    /// The inode of node `id`, made on first sight.
    func inode(forNode id: String) -> Inode {
        let key = CompactID(id)
        if let ino = lookup(key) { return Inode(ino: UInt64(ino), table: self) }
        precondition(rows.count < UInt32.max, "more inodes than 32 bits number")
        rows.append(Row(key))
        let ino = UInt32(rows.count)
        switch key {
        case .hex(let p): insert(ino, p)
        case .text(let s): textIds[ino] = s; byText[s] = ino
        }
        return Inode(ino: UInt64(ino), table: self)
    }

    /// The inode `ino`. Throws ESTALE for a number this mount never gave out.
    func inode(_ ino: UInt64) throws(FuseErrno) -> Inode {
        guard ino >= 1, ino <= UInt64(rows.count) else { throw FuseErrno(ESTALE, "unknown inode \(ino)") }
        return Inode(ino: ino, table: self)
    }

    /// Every inode number given out (to drop the kernel's caches of them).
    var all: [UInt64] { Array(1...UInt64(rows.count)) }

    /// The inode of node `id`, when the kernel was given one.
    func existing(forNode id: String) -> Inode? {
        lookup(CompactID(id)).map { Inode(ino: UInt64($0), table: self) }
    }

    func forEach(_ body: (Inode) -> Void) {
        for ino in 1...UInt64(rows.count) { body(Inode(ino: ino, table: self)) }
    }
}
