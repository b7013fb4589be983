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
    /// listings are read afresh at each opendir). One query per folder the kernel knows.
    /// Inodes with staged writes are left alone (their attributes are the staged ones).
    func changesBeside(_ v: Vault) throws(FuseErrno) -> Invalidation {
        var known: [InodeTable.Inode] = []
        inodes.forEach { if $0.seen != nil { known.append($0) } }
        var folders: [UInt64: [String: Node]] = [:]
        var out = Invalidation()
        for i in known where i.staged == nil {
            guard let was = i.seen else { continue }
            let now: Node?
            do {
                if let p = was.parentIno, let folder = try? inodes.inode(p) {
                    if folders[p] == nil { folders[p] = Dictionary(try v.children(of: folder.nodeId).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }) }
                    now = try folders[p]![i.nodeId] ?? v.node(id: i.nodeId)
                } else {
                    now = try v.node(id: i.nodeId)
                }
            } catch { throw FuseErrno(error, doing: "checking \(i.nodeId) after a change beside the mount") }
            guard let n = now else {
                if let e = i.entry { out.entries.append(e) }
                out.inodes.append(i.ino)
                i.entry = nil; i.seen = nil; i.servedBlob = nil
                continue
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
        return out
    }
}
