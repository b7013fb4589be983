import Foundation
import VaultBrowseModel
import VaultCore
import VaultSync
import VaultPrimitives

/// The browser's steps on the vault: each opens it, does one thing and releases it.
extension Browser {
    /// Opens the vault for one step and runs `body`; the vault (and its lock) is released when
    /// this returns. A key pressed since the last step makes this one count as use.
    /// `writes`: the step changes the vault (else it also runs on a read-only filesystem).
    func step<T>(lock: VaultLock.Request, writes: Bool = false, timeout: TimeInterval, _ body: (Vault) throws -> T) throws -> T {
        let touch = userActed
        let vault = try access.open(lock: lock, access: writes ? .readWrite : .read, touch: touch, lockTimeout: timeout)
        userActed = false
        vault.budgetMax = ctx.policy.contentBudgetMax.value
        return try body(vault)
    }

    /// Shows `snap`, selecting `select` (else keeping the selection on the same entry).
    func apply(_ snap: FolderSnapshot, select: String? = nil) {
        if snap.place.id != folder.id { list.filter = "" }
        folder = snap.place
        list.replace(snap.entries, select: select)
        storage = snap.summary.storage
        summary = snap.summary
        transfers = snap.transfers
    }

    /// Brings the screen up to date (every second, and after each action). Confirms the vault
    /// is still unlocked (a locked vault clears the screen) without opening it; reads it only
    /// when its database changed since the last read, or `full` (after an action, or at least
    /// every `fullInterval`); the whole-table sums at most every `summaryInterval` while it
    /// keeps changing (a sync writes its progress several times a second). Another command
    /// holding the vault shows as busy.
    func refresh(full: Bool = false) {
        lastRefresh = Date()
        var full = full
        do {
            try access.check(touch: userActed)
            userActed = false
            if case .locked = mode {
                mode = .browsing
                message = Message(text: "Unlocked again.", isError: false)
                full = true
            }
            let stamp = access.databaseStamp
            if stamp == nil || stamp != lastStamp { lastChange = Date() }
            let upToDate = summary.map { $0.readAt > lastChange } ?? false
            let age = summary.map { Date().timeIntervalSince($0.readAt) } ?? .infinity
            if !full && upToDate && stamp == lastStamp && age < Self.fullInterval {
                // Nothing to read; just say whether another command holds the vault, and the free space.
                busy = Self.busyHolder(ctx.layout)
                if let free = access.freeBytes { storage?.freeBytes = free }
                return
            }
            let reuse = full || age >= Self.summaryInterval ? nil : summary
            let snap = try step(lock: .control, timeout: 0) { v -> FolderSnapshot in
                if let s = try FolderSnapshot.load(v, folderId: folder.id, reusing: reuse) { return s }
                message = Message(text: "\(DisplayText.escaped(folder.path)) no longer exists; showing /", isError: true)
                return try FolderSnapshot.load(v, folderId: Vault.rootId)!
            }
            lastStamp = stamp   // as of before the read: a change during it is read next time
            busy = nil
            apply(snap)
        } catch {
            fail(error, quietBusy: true)
        }
        for w in warnings.take() { message = Message(text: "warning: " + w, isError: true) }
    }

    /// Why the vault cannot be opened now (another command holds it), or nil: takes the lock a
    /// refresh would and lets it go at once, without opening anything.
    static func busyHolder(_ layout: VaultLayout) -> String? {
        do { _ = try VaultLock(path: layout.lockFile, timeout: 0, request: .control); return nil } catch let e as VaultError where e.kind == .busy {
            return e.message
        } catch { return nil }
    }

    /// Reports a failed step: busy in the status bar (`quietBusy`) or the message line; a
    /// locked vault clears the screen.
    func fail(_ error: Error, quietBusy: Bool = false) {
        let e = error as? VaultError ?? VaultError.wrap(error)
        switch e.kind {
        case .locked:
            lockScreen(e.message)
        case .busy where quietBusy:
            busy = e.message
        default:
            message = Message(text: e.message + (e.hint.map { " (\($0))" } ?? ""), isError: true)
        }
    }

    /// The vault locked: forget everything read from it (names, sizes) and say so (keeping the
    /// first reason: later checks only find it locked).
    func lockScreen(_ reason: String) {
        if case .locked = mode { return }
        mode = .locked(reason)
        list.replace([])
        list.filter = ""
        storage = nil
        summary = nil
        lastStamp = nil
        transfers = []
        busy = nil
    }

    /// Opens folder `id`, selecting `select`.
    func enter(_ id: String, select: String?) {
        do {
            let stamp = access.databaseStamp
            let snap = try step(lock: .control, timeout: Self.actionLockTimeout) { v in try FolderSnapshot.load(v, folderId: id) }
            guard let snap else { message = Message(text: "That folder no longer exists.", isError: true); refresh(full: true); return }
            apply(snap, select: select)
            lastStamp = stamp
            lastRefresh = Date()
        } catch { fail(error) }
    }

    /// Runs an action that changes the vault, then shows its message and refreshes.
    func act(_ body: (Vault) throws -> String) {
        do {
            message = Message(text: try step(lock: .exclusive, writes: true, timeout: Self.actionLockTimeout, body), isError: false)
        } catch { fail(error) }
        if case .locked = mode { return }
        let outcome = message
        refresh(full: true)
        message = outcome ?? message
    }

    /// The vault path of `entry` as of now (it may have moved since the last refresh).
    func currentPath(_ v: Vault, _ entry: BrowseEntry) throws -> String { try v.path(of: try currentNode(v, entry)) }

    /// The node of `entry` as of now (it may have moved or gone since the last refresh).
    func currentNode(_ v: Vault, _ entry: BrowseEntry) throws -> Node {
        guard let n = try v.node(id: entry.id) else {
            throw VaultError(.notFound, "\(DisplayText.escaped(entry.name)) no longer exists")
        }
        return n
    }

    func togglePin(_ entry: BrowseEntry) {
        var missing: (count: Int, bytes: UInt64) = (0, 0)
        var connected = false
        act { v in
            let path = try currentPath(v, entry)
            let nodes = try v.setPinned(path, !entry.pinned)
            connected = try SyncAccount.load(from: v) != nil
            if !entry.pinned {
                let absent = nodes.filter { !$0.isFolder && $0.contentState == .notDownloaded && $0.remoteId != nil }
                missing = (absent.count, absent.reduce(0) { $0 + $1.size })
            }
            return entry.pinned ? "Unpinned \(DisplayText.escaped(path)): its content may be evicted."
                                : "Pinned \(DisplayText.escaped(path)): kept offline."
        }
        guard missing.count > 0, message?.isError == false else { return }
        // As `vault pin` does: the content downloads in the background, once the vault is free.
        let what = "\(missing.count) file(s) (\(ByteCount.format(missing.bytes)))"
        if !connected {
            message?.text += " \(what) download once the vault has a server."
        } else if let agent = ctx.agent(), (try? agent.notifyWork()) != nil {
            message?.text += " The vault agent downloads \(what) in the background."
        } else if BackgroundDownload.canStart(ctx), (try? BackgroundDownload.start(ctx)) != nil {
            message?.text += " Downloading \(what) in the background."
        } else {
            message?.text += " \(what) download with `vault sync`."
        }
    }

    func evict(_ entry: BrowseEntry) {
        act { v in
            let path = try currentPath(v, entry)
            let r = try v.evict(paths: [path])
            if r.evicted.isEmpty {
                return "Nothing to evict in \(DisplayText.escaped(path)) (not on this device, pinned, or awaiting upload)."
            }
            return "Evicted \(r.evicted.count) file(s), freed \(ByteCount.format(r.freedBytes)); the content stays on the server."
        }
    }

    func delete(_ entry: BrowseEntry) {
        act { v in
            let path = try currentPath(v, entry)
            let removed = try v.remove(path, recursive: true)
            ctx.queuedChanges(v)
            return "Deleted \(DisplayText.escaped(path))\(removed.count > 1 ? " and \(removed.count - 1) item(s) in it" : "")."
        }
    }

    func rename(_ entry: BrowseEntry, to name: String) {
        guard name != entry.name else { return }
        act { v in
            try NameRules.validate(name)
            let path = try currentPath(v, entry)
            let parent = (path as NSString).deletingLastPathComponent
            let target = NodeResult.join(parent, name)
            // A rename, never a move into a folder that happens to have the new name.
            if (try? v.resolve(target)) != nil {
                throw VaultError(.alreadyExists, "'\(DisplayText.escaped(name))' already exists in \(DisplayText.escaped(parent))")
            }
            let n = try v.move(path, to: target)
            ctx.queuedChanges(v)
            return "Renamed to \(DisplayText.escaped(n.name))."
        }
    }
}
