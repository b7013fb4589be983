import Foundation
import VaultCore
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The filesystem operations of `vault mount`, on the vault's sealed API only: reads come from
/// the sealed blob segment by segment as each authenticates (a tampered segment is EIO), writes
/// are staged sealed on disk and committed as a new sealed version on close or fsync
/// (`Vault.replaceContent`), and the tree changes go through `mkdir`, `move` and `remove`
/// exactly as the CLI's commands do. One request at a time (the session loop is one thread).
final class MountFilesystem {
    let gate: VaultGate
    let inodes = InodeTable()
    let handles = HandleTable()
    let readOnly: Bool
    /// For the connection that fetches content not on this device (`OnDemandContent`).
    let policy: EffectivePolicy
    let log: (String) -> Void

    /// Inodes closed while the vault was locked with changes not yet committed: their staged
    /// content stays in memory and is committed once the vault is unlocked (`commitPending`).
    var pending: [UInt64: InodeTable.Inode] = [:]

    /// Where a read's plaintext is put before the reply copies it to the kernel: one buffer for
    /// every read (the loop is one thread), in locked memory that is zeroed when freed (at a lock
    /// and at unmount) and, on a failed read, at once (`SealedBlobReader.read(offset:into:)`).
    var replyBuffer: SecureBytes?

    /// `replyBuffer` of at least `count` bytes.
    func replyBuffer(holding count: Int) -> SecureBytes {
        if let b = replyBuffer, b.count >= count { return b }
        let b = SecureBytes(count: max(count, 128 << 10))
        replyBuffer = b
        return b
    }

    init(gate: VaultGate, readOnly: Bool, policy: EffectivePolicy, log: @escaping (String) -> Void) {
        self.gate = gate; self.readOnly = readOnly; self.policy = policy; self.log = log
    }


    /// What the kernel is told about node `n`: a STALE file's size is its local (older) version's,
    /// the one reads return (as `cat` does).
    func attributes(_ n: Node, _ i: InodeTable.Inode, _ v: Vault? = nil) -> InodeAttributes {
        i.seen = seen(n)
        i.toldAt = Self.monotonic()
        var size = n.size
        if n.contentState == .stale, let v, let local = try? v.localSize(of: n) { size = local }
        var a = InodeAttributes(ino: i.ino, isFolder: n.isFolder, size: size, modified: i.modifiedOverride ?? n.modifiedAt)
        // The kernel answers a stat from cached attributes even once the mount's process is gone:
        // the mountpoint's own are kept 1 s, so a killed mount shows as ENOTCONN within a second.
        if i.ino == InodeTable.rootIno { a.timeout = 1 }
        if let s = i.staged { a.size = UInt64(s.count); a.modified = i.modifiedOverride ?? s.modified }
        return a
    }

    /// Seconds on the monotonic clock.
    static func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// What the kernel is told of `n`, to compare with later (`changesBeside`).
    func seen(_ n: Node) -> InodeTable.Seen {
        InodeTable.Seen(parentIno: n.parentId.map { inodes.inode(forNode: $0).ino }, size: n.size, modified: n.modifiedAt,
                        blob: n.localPath?.hashValue, state: n.contentState)
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
        return entry(n, in: parent, v)
    }

    /// The attributes of `n`, named `n.name` in folder inode `parent`: the kernel caches the entry.
    func entry(_ n: Node, in parent: UInt64, _ v: Vault? = nil) -> InodeAttributes {
        let i = inodes.inode(forNode: n.id)
        i.entry = (parent, n.name)
        return attributes(n, i, v)
    }

    func getattr(_ ino: UInt64) throws(FuseErrno) -> InodeAttributes {
        let v = try gate.vault()
        let i = try inodes.inode(ino)
        do { return attributes(try node(i, v), i, v) } catch {
            if error.code == ENOENT, let removed = attributesRemovedWhileOpen(i) { return removed }
            throw error
        }
    }

    /// The attributes of a file removed (here, by a rename over it, or by a pull) while a handle
    /// is still open on it, as on any filesystem: the last told, with the size of what the handles
    /// hold (the staged content, else the blob one of them opened) and the staged time, no link
    /// left, and not cached. Nil when no handle is open on it.
    func attributesRemovedWhileOpen(_ i: InodeTable.Inode) -> InodeAttributes? {
        guard i.openCount > 0, let seen = i.seen else { return nil }
        var a = InodeAttributes(ino: i.ino, isFolder: false, size: seen.size, modified: i.modifiedOverride ?? seen.modified)
        if let blob = handles.blob(of: i) { a.size = blob.plaintextSize }
        if let s = i.staged { a.size = UInt64(s.count); a.modified = i.modifiedOverride ?? s.modified }
        a.links = 0
        a.timeout = 0
        return a
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
        for k in kids { entries.append((k.name, entry(k, in: ino, v))) }
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
}
