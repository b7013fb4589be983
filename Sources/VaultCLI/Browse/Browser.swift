import Foundation
import VaultBrowseModel
import VaultCore
import VaultTerminal

/// `vault browse`: the full-screen browser. The logic of what is shown lives in the pure
/// `VaultBrowseModel`; this type runs it: it reads keys, opens the vault for each refresh and
/// action (never holding it in between), and draws (`Browser+Screen`).
final class Browser {
    /// What the keys do at the moment.
    enum Mode: Equatable {
        case browsing
        case help
        /// Waiting for y/n before deleting.
        case confirmDelete(BrowseEntry)
        case editing(LineEditor, EditPurpose)
        /// The revisions of a file (`v`).
        case revisions(RevisionsView)
        /// Waiting for y/n before restoring the selected revision.
        case confirmRestore(RevisionsView)
        /// The vault locked while open: nothing of it is shown, and q quits.
        case locked(String)
    }

    enum EditPurpose: Equatable {
        case filter
        case rename(BrowseEntry)
    }

    /// A line for the bottom of the screen until the next key.
    struct Message: Equatable {
        var text: String
        var isError: Bool
    }

    /// How often the screen refreshes itself (the lock state always; the vault when it changed).
    static let refreshInterval: TimeInterval = 1
    /// How often, at most, the whole-table sums are read again while the vault keeps changing.
    static let summaryInterval: TimeInterval = 5
    /// How often the vault is read even when its database seems unchanged (a safety net: the
    /// stamp catches every write; free space is read every second without the vault).
    static let fullInterval: TimeInterval = 300
    /// How long an action waits for another command's vault lock before saying busy.
    static let actionLockTimeout: TimeInterval = 1

    let ctx: CommandContext
    let access: VaultReopener
    let terminal: Terminal
    let warnings: WarningSink
    var list = BrowseList()
    var folder = FolderSnapshot.Place(id: Vault.rootId, path: "/", parentId: nil)
    var storage: StorageReport?
    /// The whole-table sums of the last read (see `FolderSnapshot.Summary`).
    var summary: FolderSnapshot.Summary?
    /// The database as of the last read: the same stamp means nothing changed since.
    var lastStamp: VaultReopener.DatabaseStamp?
    /// When the database was last seen to change.
    var lastChange = Date()
    var transfers: [TransferSummary] = []
    /// Why the last refresh could not read the vault (another command holds it), if so.
    var busy: String?
    var message: Message?
    var mode = Mode.browsing
    /// A key was pressed since the vault was last opened: the next opening counts as use.
    var userActed = true
    var lastRefresh = Date.distantPast
    var done = false

    init(ctx: CommandContext, access: VaultReopener, terminal: Terminal, warnings: WarningSink) {
        self.ctx = ctx; self.access = access; self.terminal = terminal; self.warnings = warnings
    }

    /// Runs the browser on `path` (a folder, or a file: its folder, with it selected) until `q`.
    static func run(_ ctx: CommandContext, path: String) throws {
        let warnings = WarningSink(out: ctx.out)
        let sessions = VaultSessions(layout: ctx.layout, environment: ctx.environment, policy: ctx.policy,
                                     agent: { [agents = ctx.agents] in agents.client(for: $0) }, warn: warnings.warn)
        let access = VaultReopener(sessions: sessions, password: ctx.password)
        // The first step runs before the screen is taken: it may ask for the password, and
        // its errors (locked, busy, no such path) end the command like any other's.
        let stamp = access.databaseStamp
        let (first, selectId) = try {
            let vault = try access.open(lock: .control, access: .read, touch: true, lockTimeout: Vault.lockTimeout)
            vault.budgetMax = ctx.policy.contentBudgetMax.value
            let node = try vault.resolve(path)
            let folderId = node.isFolder ? node.id : node.parentId ?? Vault.rootId
            guard let snap = try FolderSnapshot.load(vault, folderId: folderId) else {
                throw VaultError(.notFound, "no such folder: \(path)")
            }
            return (snap, node.isFolder ? nil : node.id)
        }()
        let terminal: Terminal
        do { terminal = try Terminal.start(colors: ctx.out.color) } catch let e as TerminalError {
            throw VaultError(.usage, "vault browse cannot use this terminal: \(e.message)",
                             hint: "in scripts and pipes use `vault ls` or `vault tree`")
        }
        defer { terminal.stop() }
        warnings.collect()
        let browser = Browser(ctx: ctx, access: access, terminal: terminal, warnings: warnings)
        browser.apply(first, select: selectId)
        browser.lastRefresh = Date()
        browser.lastStamp = stamp
        browser.loop()
    }

    /// Draw, wait for a key or the next refresh, act; until `q`.
    func loop() {
        while !done {
            render()
            let wait = Self.refreshInterval - Date().timeIntervalSince(lastRefresh)
            let input = terminal.read(timeout: max(50, Int(wait * 1000)))
            switch input {
            case .timeout, .other: break
            case .resize: terminal.clear()
            default:
                userActed = true
                if let key = Self.key(input) { handle(key) }
            }
            if !done && Date().timeIntervalSince(lastRefresh) >= Self.refreshInterval { refresh() }
        }
    }

    /// The browser's view of a terminal key.
    static func key(_ input: Terminal.Input) -> BrowseKey? {
        switch input {
        case .character(let c): return .character(c)
        case .control(let c): return .control(c)
        case .up: return .up
        case .down: return .down
        case .left: return .left
        case .right: return .right
        case .pageUp: return .pageUp
        case .pageDown: return .pageDown
        case .home: return .home
        case .end: return .end
        case .enter: return .enter
        case .backspace: return .backspace
        case .delete: return .delete
        case .escape: return .escape
        case .resize, .other, .timeout: return nil
        }
    }

    func handle(_ key: BrowseKey) {
        TestHooks.trapPoint("browse-key")
        if tooSmall {   // nothing to see an action by: only q works
            if key == .character("q") || key == .character("Q") { done = true }
            return
        }
        message = nil
        switch mode {
        case .locked:
            if key == .character("q") || key == .character("Q") { done = true } else { refresh(full: true) }
        case .help:
            mode = .browsing
        case .confirmDelete(let entry):
            mode = .browsing
            if key == .character("y") || key == .character("Y") { delete(entry) } else { message = Message(text: "Nothing deleted.", isError: false) }
        case .editing(var editor, let purpose):
            let outcome = editor.handle(key)
            switch (outcome, purpose) {
            case (.editing, .filter):
                mode = .editing(editor, purpose)
                list.filter = editor.text
            case (.editing, .rename):
                mode = .editing(editor, purpose)
            case (.accepted, .filter):
                mode = .browsing
            case (.cancelled, .filter):
                mode = .browsing
                list.filter = ""
            case (.accepted(let name), .rename(let entry)):
                mode = .browsing
                rename(entry, to: name)
            case (.cancelled, .rename):
                mode = .browsing
            }
        case .browsing:
            perform(KeyMap.action(for: key))
        case .revisions(let view):
            perform(KeyMap.revisionsAction(for: key), in: view)
        case .confirmRestore(let view):
            mode = .revisions(view)
            if key == .character("y") || key == .character("Y") { restore(view) } else { message = Message(text: "Nothing restored.", isError: false) }
        }
    }

    /// An action in the revisions of a file.
    func perform(_ action: BrowseAction, in view: RevisionsView) {
        var view = view
        switch action {
        case .moveUp: view.move(by: -1)
        case .moveDown: view.move(by: 1)
        case .pageUp: view.page(-1)
        case .pageDown: view.page(1)
        case .first: view.moveToFirst()
        case .last: view.moveToLast()
        case .open: showRevision(view); return
        case .restore:
            guard let r = view.selected else { return }
            if r.isHead { message = Message(text: "That is the current version already.", isError: false); return }
            mode = .confirmRestore(view); return
        case .goUp: mode = .browsing; return
        case .redraw: terminal.repaintAll(); return
        default: return
        }
        mode = .revisions(view)
    }

    func perform(_ action: BrowseAction) {
        switch action {
        case .moveUp: list.move(by: -1)
        case .moveDown: list.move(by: 1)
        case .pageUp: list.page(-1)
        case .pageDown: list.page(1)
        case .first: list.moveToFirst()
        case .last: list.moveToLast()
        case .open:
            guard let e = list.selected else { return }
            if e.isFolder { enter(e.id, select: nil) } else { show(e) }
        case .goUp: goUp()
        case .togglePin: if let e = list.selected { togglePin(e) }
        case .evict: if let e = list.selected { evict(e) }
        case .delete: if let e = list.selected { mode = .confirmDelete(e) }
        case .rename: if let e = list.selected { mode = .editing(LineEditor(e.name), .rename(e)) }
        case .filter: mode = .editing(LineEditor(list.filter), .filter)
        case .cycleSort: list.sort = list.sort.next
        case .help: mode = .help
        case .revisions: if let e = list.selected { openRevisions(e) }
        case .restore: break
        case .quit: done = true
        case .redraw: terminal.repaintAll()
        case .clearFilter: list.filter = ""
        case .none: break
        }
    }

    func goUp() {
        guard let parent = folder.parentId else { return }
        list.filter = ""
        enter(parent, select: folder.id)
    }
}

/// Warnings from opening the vault (reduced protection, an expired session): to standard error
/// before the screen is taken, then kept for the message line.
final class WarningSink {
    private let out: Output
    private var collecting = false
    private(set) var pending: [String] = []

    init(out: Output) { self.out = out }

    func warn(_ s: String) {
        if collecting { if !pending.contains(s) { pending.append(s) } } else { out.warn(s) }
    }

    func collect() { collecting = true }

    /// The warnings not shown yet (and forgets them).
    func take() -> [String] { defer { pending = [] }; return pending }
}
