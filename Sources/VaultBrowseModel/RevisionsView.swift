import Foundation
import VaultCore

/// The revisions of one file (`v`), as `vault revisions` lists them: newest first, the current
/// one marked, with the selection and scroll position (`ListScroll`).
public struct RevisionsView: Equatable, Sendable {
    /// The file, as its row showed it.
    public var file: BrowseEntry
    /// Its vault path when listed.
    public var path: String
    public private(set) var revisions: [RevisionInfo]
    /// The server could not be reached: the list is the one last seen.
    public var offline: Bool
    /// This device's id (its revisions say `this device`).
    public var thisDevice: String?
    public private(set) var scroll: ListScroll

    public init(file: BrowseEntry, path: String, revisions: [RevisionInfo], offline: Bool, thisDevice: String?, height: Int = 1) {
        self.file = file; self.path = path; self.revisions = revisions; self.offline = offline; self.thisDevice = thisDevice
        scroll = ListScroll(count: revisions.count, height: height)
    }

    public var height: Int {
        get { scroll.height }
        set { scroll.height = newValue }
    }

    public var selected: RevisionInfo? { revisions.indices.contains(scroll.selection) ? revisions[scroll.selection] : nil }

    /// The revisions on screen, with their index.
    public var rows: [(index: Int, revision: RevisionInfo)] { scroll.rows.map { ($0, revisions[$0]) } }

    /// A new list (after a restore), keeping the selection on the same revision when it is
    /// still there, else on the current one.
    public mutating func replace(_ list: [RevisionInfo], offline: Bool) {
        let keep = selected?.id
        revisions = list
        self.offline = offline
        let index = list.firstIndex { $0.id == keep } ?? list.firstIndex { $0.isHead } ?? 0
        scroll.reset(count: list.count, selection: index)
    }

    public mutating func move(by delta: Int) { scroll.move(by: delta) }
    public mutating func page(_ pages: Int) { scroll.page(pages) }
    public mutating func moveToFirst() { scroll.moveToFirst() }
    public mutating func moveToLast() { scroll.moveToLast() }

    /// The title: `revisions of /docs/a.txt: 3`, and `last seen` when the server could not be reached.
    public var title: String {
        "revisions of \(DisplayText.escaped(path)): \(revisions.count)" + (offline ? " (offline: as last seen)" : "")
    }

    /// What the view says when there is nothing to list.
    public var emptyText: String {
        offline ? "(no revisions seen yet; the server cannot be reached)" : "(no revisions: the file was never uploaded; `vault sync` sends it)"
    }

    /// One revision's columns.
    public struct Row: Equatable, Sendable {
        /// `*` for the current version (the head), else blank.
        public var mark: String
        /// The id's first 8 characters (what a restore is asked about; `vault revisions` lists it whole).
        public var id: String
        /// `2024-05-01 13:45`.
        public var time: String
        public var size: String
        /// `this device`, `device 1a2b3c4d`, `here, not uploaded`.
        public var device: String
        /// `current`, and `here` when its content is on this device.
        public var note: String

        public init(mark: String, id: String, time: String, size: String, device: String, note: String) {
            self.mark = mark; self.id = id; self.time = time; self.size = size; self.device = device; self.note = note
        }
    }

    /// The columns of `r` (times in `timeZone`).
    public func row(_ r: RevisionInfo, timeZone: TimeZone = .current) -> Row {
        let notes = (r.isHead ? ["current"] : []) + (r.local ? ["here"] : [])
        return Row(mark: r.isHead ? "*" : " ", id: Self.shortId(r.id), time: StatusText.date(r.time, timeZone: timeZone),
                   size: ByteCount.format(UInt64(max(0, r.size))), device: r.deviceLabel(thisDevice: thisDevice),
                   note: notes.joined(separator: ", "))
    }

    /// The first 8 characters of a revision id, escaped (a server chooses them).
    public static func shortId(_ id: String) -> String { DisplayText.escaped(String(id.prefix(8))) }

    /// The question before a restore (the title names the file; this fits 80 columns).
    public func restoreQuestion(_ r: RevisionInfo) -> String {
        let row = row(r)
        return "Restore revision \(row.id) (\(row.time), \(row.size)) as current? (y/n)"
    }
}

/// Where each column of a revision row goes on a screen `width` cells wide: the mark, the id
/// and the time always; the size, the device and the note as room allows (80 columns show all).
public struct RevisionRowLayout: Equatable, Sendable {
    public typealias Column = RowLayout.Column
    public var mark = Column(x: 0, width: 1)
    public var id = Column(x: 2, width: 8)
    public var time = Column(x: 12, width: RowLayout.dateWidth)
    public var size: Column?
    public var device: Column?
    public var note: Column?

    public init(width: Int) {
        if width >= 40 { size = Column(x: 30, width: RowLayout.sizeWidth) }
        if width >= 52 { device = Column(x: 42, width: min(20, width - 42)) }
        if width >= 70 { note = Column(x: 64, width: width - 64) }
    }
}
