import Foundation
import VaultBrowseModel
import VaultCore
import VaultTerminal

/// Drawing: a title line, the list, two status lines (storage; lock state, transfers, busy)
/// and a line for messages, prompts and key hints.
extension Browser {
    /// The smallest screen the browser draws on (80×24 shows every column).
    static let minimumSize = Terminal.Size(rows: 7, columns: 30)

    /// Whether the screen is below `minimumSize`.
    var tooSmall: Bool {
        let s = terminal.size
        return s.rows < Self.minimumSize.rows || s.columns < Self.minimumSize.columns
    }

    func render() {
        terminal.clear()
        terminal.placeCursor(nil)
        let size = terminal.size
        list.height = max(1, size.rows - 4)
        switch mode {
        case .revisions(var v): v.height = list.height; mode = .revisions(v)
        case .confirmRestore(var v): v.height = list.height; mode = .confirmRestore(v)
        default: break
        }
        if tooSmall {
            terminal.draw("Terminal too small (\(size.columns)×\(size.rows)); make it at least \(Self.minimumSize.columns)×\(Self.minimumSize.rows). q quits.",
                          row: 0, column: 0, width: size.columns)
        } else if case .locked(let reason) = mode {
            drawLocked(reason, size)
        } else if mode == .help {
            drawHelp(size)
        } else if let view = revisionsShown {
            drawRevisions(view, size)
            drawStatus(size)
            drawBottomLine(size)
        } else {
            drawHeader(size)
            drawRows(size)
            drawStatus(size)
            drawBottomLine(size)
        }
        terminal.refresh()
    }

    func drawHeader(_ size: Terminal.Size) {
        var right = "sort: \(list.sort.rawValue)"
        if !list.filter.isEmpty { right += "  filter: \(DisplayText.escaped(list.filter))" }
        right += "  \(list.visible.isEmpty ? 0 : list.selection + 1)/\(list.visible.count)"
        let rightWidth = min(CellText.width(right) + 1, size.columns / 2)
        terminal.draw(" vault  " + DisplayText.escaped(folder.path), row: 0, column: 0, width: size.columns - rightWidth, style: .header)
        terminal.draw(right + " ", row: 0, column: size.columns - rightWidth, width: rightWidth, style: .header, align: .right)
    }

    func drawRows(_ size: Terminal.Size) {
        let layout = RowLayout(width: size.columns)
        if list.visible.isEmpty {
            let text = list.entries.isEmpty ? "(empty folder)" : "(nothing here matches the filter; Esc clears it)"
            terminal.draw(text, row: 1, column: layout.name.x, width: layout.name.width, style: .dim)
            return
        }
        for (i, entry) in list.rows.enumerated() {
            let row = 1 + i
            let selected = list.top + i == list.selection
            if selected { terminal.draw("", row: row, column: 0, width: size.columns, highlight: true) }
            terminal.draw(entry.marks, row: row, column: layout.marks.x, width: layout.marks.width,
                          style: Self.markStyle(entry), highlight: selected, ellipsis: false)
            terminal.draw(entry.displayName, row: row, column: layout.name.x, width: layout.name.width,
                          style: entry.isFolder ? .folder : entry.content == .notDownloaded ? .dim : .normal, highlight: selected)
            if let c = layout.size {
                terminal.draw(entry.sizeText, row: row, column: c.x, width: c.width, highlight: selected, align: .right)
            }
            if let c = layout.date {
                terminal.draw(StatusText.date(entry.modifiedAt), row: row, column: c.x, width: c.width, style: .dim, highlight: selected)
            }
        }
    }

    static func markStyle(_ e: BrowseEntry) -> Style {
        switch e.activity {
        case .conflict: return .conflict
        case .awaitingUpload, .uploading, .paused: return .pending
        case .downloading: return .pinned
        case .none: return e.pinned ? .pinned : e.content == .notDownloaded ? .dim : e.content == .stale ? .pending : .normal
        }
    }

    func drawStatus(_ size: Terminal.Size) {
        let storageText = storage.map(StatusText.storage) ?? "storage: reading…"
        terminal.draw(" " + storageText, row: size.rows - 3, column: 0, width: size.columns, style: .status)
        var parts: [String] = []
        if let busy { parts.append("BUSY: " + busy) }
        parts.append(StatusText.session(access.deadlines, heldHere: access.source == .process, now: access.now))
        if let c = StatusText.conflicts(summary?.conflictCount ?? 0) { parts.append(c) }
        parts.append("transfers: " + StatusText.transfers(transfers))
        terminal.draw(" " + parts.joined(separator: "  |  "), row: size.rows - 2, column: 0, width: size.columns, style: .status)
    }

    func drawBottomLine(_ size: Terminal.Size) {
        let row = size.rows - 1
        switch mode {
        case .editing(let editor, let purpose):
            let label: String
            switch purpose {
            case .filter: label = "Filter: "
            case .rename(let e): label = "Rename \(DisplayText.escaped(e.name)) to: "
            }
            let labelWidth = min(CellText.width(label), size.columns / 2)
            terminal.draw(label, row: row, column: 0, width: labelWidth, style: .notice)
            let (text, cursor) = editor.window(width: size.columns - labelWidth, cells: CellText.width)
            terminal.draw(text, row: row, column: labelWidth, width: size.columns - labelWidth, ellipsis: false)
            terminal.placeCursor((row, labelWidth + cursor))
        case .confirmDelete(let e):
            var q = "Delete \(e.displayName)"
            if e.isFolder { q += " and everything in it (\(e.sizeText))" }
            q += "?"
            if e.activity == .awaitingUpload && !e.isFolder { q += " It was never uploaded: this cannot be undone." }
            terminal.draw(q + " (y/n)", row: row, column: 0, width: size.columns, style: .error)
        case .confirmRestore(let view):
            if let r = view.selected { terminal.draw(view.restoreQuestion(r), row: row, column: 0, width: size.columns, style: .error) }
        default:
            if let m = message {
                terminal.draw(m.text, row: row, column: 0, width: size.columns, style: m.isError ? .error : .notice)
            } else {
                terminal.draw(revisionsShown == nil ? BrowseHelp.hint : BrowseHelp.revisionsHint, row: row, column: 0, width: size.columns, style: .dim)
            }
        }
    }

    /// The revisions view on screen, if it is.
    var revisionsShown: RevisionsView? {
        switch mode {
        case .revisions(let v), .confirmRestore(let v): return v
        default: return nil
        }
    }

    /// The title line and one row per revision: `*` the current one, id, time, size, device, notes.
    func drawRevisions(_ view: RevisionsView, _ size: Terminal.Size) {
        let right = view.revisions.isEmpty ? "" : "\(view.scroll.selection + 1)/\(view.revisions.count) "
        let rightWidth = min(CellText.width(right), size.columns / 2)
        terminal.draw(" vault  " + view.title, row: 0, column: 0, width: size.columns - rightWidth, style: .header)
        terminal.draw(right, row: 0, column: size.columns - rightWidth, width: rightWidth, style: .header, align: .right)
        let layout = RevisionRowLayout(width: size.columns)
        if view.revisions.isEmpty {
            terminal.draw(view.emptyText, row: 1, column: layout.id.x, width: size.columns - layout.id.x, style: .dim)
            return
        }
        for (i, item) in view.rows.enumerated() {
            let row = 1 + i
            let selected = item.index == view.scroll.selection
            let r = view.row(item.revision)
            if selected { terminal.draw("", row: row, column: 0, width: size.columns, highlight: true) }
            terminal.draw(r.mark, row: row, column: layout.mark.x, width: layout.mark.width, style: .pinned, highlight: selected, ellipsis: false)
            terminal.draw(r.id, row: row, column: layout.id.x, width: layout.id.width, highlight: selected, ellipsis: false)
            terminal.draw(r.time, row: row, column: layout.time.x, width: layout.time.width, style: .dim, highlight: selected)
            if let c = layout.size { terminal.draw(r.size, row: row, column: c.x, width: c.width, highlight: selected, align: .right) }
            if let c = layout.device { terminal.draw(r.device, row: row, column: c.x, width: c.width, highlight: selected) }
            if let c = layout.note { terminal.draw(r.note, row: row, column: c.x, width: c.width, style: .dim, highlight: selected) }
        }
    }

    func drawLocked(_ reason: String, _ size: Terminal.Size) {
        var why = reason
        for prefix in ["the vault is locked: ", "the vault is locked"] where why.hasPrefix(prefix) { why.removeFirst(prefix.count) }
        if why.isEmpty { why = "It was locked (`vault lock`), or its session ended." }
        let lines = ["The vault is locked.", "", why.prefix(1).uppercased() + why.dropFirst(), "",
                     "Unlock it with `vault unlock` in another terminal and browsing resumes here.",
                     "Press q to quit."]
        let top = max(0, (size.rows - lines.count) / 2)
        for (i, l) in lines.enumerated() {
            let w = min(size.columns, CellText.width(l))
            terminal.draw(l, row: top + i, column: max(0, (size.columns - w) / 2), width: w, style: i == 0 ? .error : .normal)
        }
    }

    func drawHelp(_ size: Terminal.Size) {
        for (i, l) in BrowseHelp.lines.enumerated() where i < size.rows {
            terminal.draw(" " + l, row: i, column: 0, width: size.columns, style: i == 0 ? .header : .normal)
        }
    }
}
