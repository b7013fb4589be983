import Foundation
import VaultCore
import VaultSync
#if canImport(Glibc)
import Glibc
#endif

/// Reading a file whose content is not on this device (docs/mount.md "Reading"): the segments a
/// read needs are fetched by range into the vault's sparse partial (`OnDemandContent`), each
/// authenticated before it is kept and again when served; sequential reads prefetch ahead on a
/// helper thread (`OnDemandContent.prefetch`), so a read waits only for its own segments. Once
/// every segment is here the partial is published as the file's cached blob, and reads go on
/// from it. Offline, or when the server stalls past the stall timeout, the read is EIO with the
/// reason in the log.
extension MountFilesystem {
    /// Segments fetched beyond a sequential read (bounded: 16 × 64 KiB = 1 MiB ahead, fetched
    /// again once fewer than half of them are left).
    static let prefetchSegments = 16

    /// A file whose content comes from the server: not downloaded, with a server copy, on a mount
    /// that can keep what it fetches (a `--read-only` mount opens the vault read-only: there such a
    /// file is EIO, "not on this device", as `openBlob` says).
    func isOnDemand(_ n: Node) -> Bool {
        !readOnly && n.type == .file && n.contentState == .notDownloaded && n.remoteId != nil
    }

    /// Reads the record of `n`'s remote content and opens its partial (shared by the inode's handles).
    func openRemote(_ i: InodeTable.Inode, _ n: Node, _ v: Vault) throws(FuseErrno) {
        guard i.remote == nil else { return }
        i.remoteReported = 0
        do { i.remote = try OnDemandContent.open(n, in: v, policy: policy) } catch {
            throw onDemandFailure(error, doing: "opening the remote content of \(n.id)")
        }
    }

    /// Serves `[offset, offset + size)` of an on-demand file: fetches what is missing (with the
    /// prefetch when the read continues the previous one), then the authenticated plaintext.
    func readRemote(_ f: HandleTable.OpenFile, size: Int, offset: Int64, _ v: Vault, _ reply: (UnsafeRawBufferPointer) -> Void) throws(FuseErrno) {
        guard let remote = f.inode.remote else { throw FuseErrno(EIO, "no remote content for \(f.inode.nodeId)") }
        let start = UInt64(max(0, offset))
        guard start < UInt64(max(0, remote.sparse.record.size)) else { reply(UnsafeRawBufferPointer(start: nil, count: 0)); return }
        let ahead = start == f.nextOffset && start > 0 ? Self.prefetchSegments : 0
        let buffer = replyBuffer(holding: size)
        let bytes: Int
        do {
            bytes = try buffer.withUnsafeMutableBytes {
                try remote.read(offset: start, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<size]), ahead: ahead, in: v, policy: policy)
            }
            // What arrived since the last read (this read's fetch, and the prefetch's meanwhile).
            let total = remote.fetchedBytes, fetched = total - f.inode.remoteReported
            if fetched > 0 {
                f.inode.remoteReported = total
                log("fetched \(fetched) sealed bytes of \(f.inode.nodeId) (\(remote.presentCount) of \(remote.segmentCount ?? 0) segments here)")
                fitBudget(v)
            }
        } catch {
            throw onDemandFailure(error, doing: "reading \(f.inode.nodeId) at \(offset)")
        }
        f.nextOffset = start + UInt64(bytes)
        buffer.withUnsafeBytes { reply(UnsafeRawBufferPointer(rebasing: $0[..<bytes])) }
        if remote.isComplete { publish(f, remote, v) }
    }

    /// Publishes the partials of open files that a prefetch completed after their last read
    /// (between requests; nothing to do, and no vault opened, when there is none).
    func publishCompleted() {
        var done: [UInt64: HandleTable.OpenFile] = [:]
        for f in handles.openFiles where f.inode.remote?.isComplete == true && !f.inode.removedWhileOpen { done[f.inode.ino] = f }
        guard !done.isEmpty, let v = try? gate.vault() else { return }
        for f in done.values { if let r = f.inode.remote { publish(f, r, v) } }
    }

    /// The content budget, with the partial that just grew counted (`Vault.applyBudget`): least
    /// recently used content and partials go first, never those of a file the mount has open
    /// (the log says how much, never which: names stay out of it).
    private func fitBudget(_ v: Vault) {
        do {
            let r = try v.applyBudget(keeping: Set(handles.openFiles.map { $0.inode.nodeId }))
            if !r.evicted.isEmpty { log("the content budget evicted \(r.evicted.count) file(s) (\(r.freedBytes) bytes) to make room") }
            if r.message != nil { log("the cache still exceeds the content budget: what is left is pinned or in use (`vault storage`)") }
        } catch { log("the content budget could not be applied: \(Self.reason(error))") }
    }

    /// Every segment is here: the partial becomes the file's cached blob (the content budget
    /// applies, never evicting an open file); the inode's handles read from it from now on. A
    /// failure is logged and the partial kept (the reads already served stay right).
    private func publish(_ f: HandleTable.OpenFile, _ remote: OnDemandContent, _ v: Vault) {
        let open = Set(handles.openFiles.map { $0.inode.nodeId })
        do {
            guard try v.node(id: f.inode.nodeId) != nil else {
                f.inode.removedWhileOpen = true   // the complete partial stays the handles' content
                return
            }
            guard let n = try v.publishSparse(remote.sparse, nodeId: f.inode.nodeId, keeping: open) else {
                log("\(f.inode.nodeId) changed while its content arrived: its partial was dropped")
                f.inode.remote = nil
                return
            }
            f.inode.remote = nil
            log("\(f.inode.nodeId) is now on this device (all \(remote.segmentCount ?? 0) segments)")
            f.blob = try? v.openContent(n)
            f.inode.servedBlob = n.localPath
        } catch {
            log("\(f.inode.nodeId): its complete content could not be stored in the cache: \(Self.reason(error))")
        }
    }

    /// The errno of a failed on-demand fetch, with its whole reason in the log (node ids and the
    /// server's address only; never a name or content): EIO, but for a locked vault (EACCES) and
    /// a full disk (ENOSPC). A file changed on the server meanwhile is EIO too (a sync brings it).
    private func onDemandFailure(_ error: Error, doing what: String) -> FuseErrno {
        let e = FuseErrno(error, doing: what)
        log("\(what) failed: \(Self.reason(error))")
        return e.code == EACCES || e.code == ENOSPC ? e : FuseErrno(EIO, e.reason)
    }

    static func reason(_ error: Error) -> String {
        guard let v = error as? VaultError else { return "\(error)" }
        return v.message + (v.hint.map { " (\($0))" } ?? "")
    }
}
