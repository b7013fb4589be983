import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// Changes made beside the mount (a pull by `vault sync` or the agent, any `vault` command, or
/// this mount's own commits) reach the kernel's caches (docs/mount.md "Sync while mounted"): the
/// loop notices the database changed (`VaultGate`), and this finds what the kernel was told
/// that is no longer so.
extension MountFilesystem {
    /// What the kernel must forget: names (in folder inodes) and inodes (attributes and pages).
    struct Invalidation {
        var entries: [(parent: UInt64, name: String)] = []
        var inodes: [UInt64] = []
        var isEmpty: Bool { entries.isEmpty && inodes.isEmpty }
    }

    /// Compares every inode the kernel was told of with its node now: a name gone, moved or
    /// renamed is an entry to drop; changed attributes or content (size, time, blob, state) an
    /// inode to drop. New names need nothing (a lookup that found nothing is not cached, and
    /// listings are read afresh at each opendir). One query per folder of the inodes the kernel
    /// may still cache (told within the cache time, or open).
    /// Inodes with staged writes are left alone (their attributes are the staged ones).
    func changesBeside(_ v: Vault) throws(FuseErrno) -> Invalidation {
        // By folder, one at a time: only one folder's children are in memory at once.
        var byFolder: [UInt64: [InodeTable.Inode]] = [:]
        // What the kernel was told longer ago than it may cache it, it asks for again (an open
        // file's pages stay cached past that: it is checked still).
        let cachedSince = Self.monotonic() - InodeAttributes.cacheSeconds - 1
        inodes.forEach { i in
            if i.seen != nil && i.staged == nil && !i.removedWhileOpen && (i.toldAt >= cachedSince || i.openCount > 0) {
                byFolder[i.seen?.parentIno ?? 0, default: []].append(i)
            }
        }
        var out = Invalidation()
        for (p, known) in byFolder {
            let kids: [String: Node]
            do {
                if p != 0, let folder = try? inodes.inode(p) {
                    kids = Dictionary(try v.children(of: folder.nodeId).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                } else { kids = [:] }
                for i in known { try compare(i, with: try kids[i.nodeId] ?? v.node(id: i.nodeId), into: &out) }
            } catch { throw FuseErrno(error, doing: "checking folder inode \(p) after a change beside the mount") }
        }
        return out
    }

    /// Adds what the kernel must forget of inode `i`, whose node is now `now` (nil: gone).
    private func compare(_ i: InodeTable.Inode, with now: Node?, into out: inout Invalidation) {
        guard let was = i.seen else { return }
        guard let n = now else {
            if let e = i.entry { out.entries.append(e) }
            out.inodes.append(i.ino)
            i.entry = nil; i.servedBlob = nil
            // Open handles go on with the file as it was: its last told attributes stay what
            // they see (fstat) and what a first write through them loads against.
            if i.openCount > 0 { i.removedWhileOpen = true } else { i.seen = nil }
            return
        }
        let fresh = seen(n)
        // Moved, renamed, or into a folder the kernel never saw (names compare byte for byte).
        if let e = i.entry, n.parentId.flatMap(inodes.existing(forNode:))?.ino != e.parent || !e.name.utf8.elementsEqual(n.name.utf8) {
            out.entries.append(e)
            i.entry = nil
        }
        if fresh.size != was.size || fresh.modified != was.modified || fresh.blob != was.blob || fresh.state != was.state {
            out.inodes.append(i.ino)
            i.modifiedOverride = nil
        }
        i.seen = fresh
    }
}
