import Foundation
import VaultBrowseModel
import VaultCore
import VaultSync

/// `v`: the revisions of the selected file, read and restored through the steps `vault
/// revisions`, `vault cat --revision` and `vault restore` take (`RevisionAccess`). Each is one
/// step on the vault (the agent, when one runs, yields it meanwhile, as for any command); network
/// work says so on the message line first, as a download does.
extension Browser {
    /// Lists the revisions of `entry` (fresh from the server, or as last seen when it cannot be
    /// reached) and shows them.
    func openRevisions(_ entry: BrowseEntry) {
        guard !entry.isFolder else {
            message = Message(text: "Folders have no revisions: select a file.", isError: true)
            return
        }
        do {
            let view = try step(lock: .sync, timeout: Self.actionLockTimeout) { v -> RevisionsView in
                let node = try currentNode(v, entry)
                let (list, offline) = try RevisionAccess.list(v, node) {
                    try progressClient(v, doing: "Listing the revisions of \(DisplayText.escaped(node.name))")
                }
                return RevisionsView(file: entry, path: try v.path(of: node), revisions: list, offline: offline,
                                     thisDevice: try SyncAccount.load(from: v)?.deviceId, height: list.count)
            }
            mode = .revisions(view)
            message = view.offline ? Message(text: "The server cannot be reached: these are the revisions last seen.", isError: true) : nil
        } catch { fail(error) }
    }

    /// Enter in the revisions: the selected one in the pager, downloaded first when needed.
    func showRevision(_ view: RevisionsView) {
        guard let r = view.selected else { return }
        let handle: BlobHandle
        do {
            // As `vault cat --revision`: a revision downloads into the vault (a sealed blob).
            handle = try step(lock: .sync, writes: true, timeout: Self.actionLockTimeout) { v -> BlobHandle in
                let node = try currentNode(v, view.file)
                try RevisionAccess.makeLocal(v, node, r.id) {
                    try progressClient(v, doing: "Downloading revision \(RevisionsView.shortId(r.id)) of \(DisplayText.escaped(node.name))")
                }
                message = nil
                return try v.openRevision(nodeId: node.id, revision: r.id).handle
            }
        } catch { fail(error); return }
        page(handle)
        reloadRevisions(view)
    }

    /// `R`, confirmed: the selected revision becomes the current version (a new head; every
    /// version stays a revision), and the list shows it.
    func restore(_ view: RevisionsView) {
        guard let r = view.selected else { return }
        var view = view
        do {
            let outcome = try step(lock: .sync, writes: true, timeout: Self.actionLockTimeout) { v -> String in
                let node = try currentNode(v, view.file)
                let client = try progressClient(v, doing: "Restoring revision \(RevisionsView.shortId(r.id)) of \(DisplayText.escaped(node.name))")
                let done = try RevisionAccess.restore(v, node, r.id, policy: ctx.policy, client: client, idShown: RevisionsView.shortId(r.id))
                let (list, offline) = try RevisionAccess.list(v, done.node) { client }
                view.path = done.path
                view.replace(list, offline: offline)
                return done.message
            }
            mode = .revisions(view)
            message = Message(text: outcome, isError: false)
        } catch {
            mode = .revisions(view)
            fail(error)
        }
        if case .locked = mode { return }
        let said = message
        refresh(full: true)   // the file's size, time and state changed
        message = said ?? message
    }

    /// The list again as cached (a revision read is now on this device), without the server.
    private func reloadRevisions(_ view: RevisionsView) {
        guard case .revisions = mode else { return }
        var view = view
        if let list = try? step(lock: .control, timeout: 0, { v in try v.revisions(nodeId: view.file.id) }) {
            view.replace(list, offline: view.offline)
        }
        mode = .revisions(view)
    }

}
