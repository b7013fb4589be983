import Foundation
import VaultCore
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// What a lock and an unmount do to open files and staged changes.
extension MountFilesystem {
    /// The vault locked: no open file keeps a key (its blob reader is dropped; it reopens after
    /// `vault unlock`). Staged writes stay in memory, to commit at the next close or fsync once
    /// unlocked (or, for a file closed while locked, at the unlock: `commitPending`).
    func dropReaders() {
        for f in handles.openFiles { f.blob = nil }
        replyBuffer = nil
        inodes.forEach { $0.servedBlob = nil; $0.remote?.cancel(); $0.remote = nil }
    }

    /// Commits every staged change (at unmount), logging what could not be.
    func commitAll() {
        commitPending()
        for f in handles.openFiles {
            do throws(FuseErrno) { try commit(f.inode) } catch { log("not committed at unmount: \(f.inode.nodeId): \(error.reason ?? "")") }
        }
    }
}
