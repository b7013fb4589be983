import Foundation
import VaultBrowseModel
import VaultCore
import VaultSync

/// Enter on a file: its plaintext in the pager, downloaded first when it is not on this device.
extension Browser {
    func show(_ entry: BrowseEntry) {
        let handle: BlobHandle
        do {
            // The lock `vault cat` takes (transfer controls may watch the download); released
            // before the pager starts: the handle reads the sealed file it has open.
            handle = try step(lock: .sync, timeout: Self.actionLockTimeout) { v -> BlobHandle in
                var node = try currentNode(v, entry)
                if node.contentState == .notDownloaded {
                    if v.isReadOnly {
                        throw VaultError(.notLocal, "the content of \(DisplayText.escaped(node.name)) is not on this device, and nothing can be downloaded on a read-only filesystem")
                    }
                    guard node.remoteId != nil, try SyncAccount.load(from: v) != nil else {
                        throw VaultError(.notLocal, "the content of \(DisplayText.escaped(node.name)) is not on this device, and there is no server to download it from",
                                         hint: "connect the vault to its server (`vault login`)")
                    }
                    node = try download(node, v)
                }
                return try v.openContent(node)
            }
        } catch { fail(error); return }
        page(handle)
        if entry.content == .stale && message == nil {
            message = Message(text: "\(entry.displayName) is an older version: the server has a newer one (e evicts it; Enter then downloads the new one).", isError: false)
        }
        refresh(full: true)   // the content state and the access time changed
    }

    /// Streams `handle`'s plaintext into the pager (the screen given back to it meanwhile); a
    /// failure, or the pager's own, goes to the message line.
    func page(_ handle: BlobHandle) {
        let pager = Pager(environment: ctx.environment, exportAllowed: ctx.policy.plaintextExport.value != false)
        do {
            let status = try terminal.runOutside {
                try pager.run { write in try handle.stream { try write($0) } }
            }
            if status != 0 && status != 128 + SIGPIPE {
                message = Message(text: "The pager (\(pager.command)) exited with status \(status).", isError: true)
            }
        } catch { fail(error) }
        if ctx.policy.plaintextExport.value == false && message == nil {
            message = Message(text: "Shown in less's secure mode: the policy forbids exporting plaintext.", isError: false)
        }
    }

    /// Downloads `node`'s content, with a progress line at the bottom of the screen.
    private func download(_ node: Node, _ v: Vault) throws -> Node {
        let client = try progressClient(v, doing: "Downloading \(DisplayText.escaped(node.name))")
        defer { message = nil }
        return try client.ensureLocal(node)
    }

    /// A sync client for one step whose notes and progress go to the message line (`doing`, then
    /// its percentage): as `ctx.syncClient`, but nothing may write to the terminal while the
    /// screen is taken.
    func progressClient(_ v: Vault, doing: String) throws -> SyncClient {
        let client = try SyncClient(vault: v, policy: ctx.policy, say: { [self] in
            message = Message(text: $0, isError: false); render()
        }, warn: { [warnings] in warnings.warn($0) })
        message = Message(text: doing + "…", isError: false)
        render()
        client.onProgress = { [self] (p: TransferProgress) in
            let pct = p.bytesTotal > 0 ? p.bytesDone * 100 / p.bytesTotal : 100
            message = Message(text: "\(doing)  \(pct)%  \(ByteCount.format(UInt64(max(0, p.bytesDone))))/\(ByteCount.format(UInt64(max(0, p.bytesTotal))))",
                              isError: false)
            render()
        }
        return client
    }
}
