/// A selection in a list of `count` rows shown `height` at a time, and the scroll position that
/// keeps it on screen. Invariants after every change: `selection` is a valid index (0 when
/// empty); `top` is the least scroll that shows it, never past the last row.
public struct ListScroll: Equatable, Sendable {
    public private(set) var count = 0
    public private(set) var selection = 0
    /// The index of the first row on screen.
    public private(set) var top = 0
    /// Rows on screen.
    public var height: Int = 1 { didSet { height = max(1, height); scrollToSelection() } }

    public init(count: Int = 0, height: Int = 1) {
        self.height = max(1, height)
        reset(count: count, selection: 0)
    }

    /// The indices on screen.
    public var rows: Range<Int> { top..<min(count, top + height) }

    /// A new row count, with `selection` (clamped to it) selected.
    public mutating func reset(count: Int, selection: Int) {
        self.count = max(0, count)
        self.selection = min(max(0, selection), max(0, self.count - 1))
        scrollToSelection()
    }

    /// Moves the selection by `delta` rows (negative: up), stopping at the ends.
    public mutating func move(by delta: Int) {
        guard count > 0 else { return }
        selection = min(max(0, selection + delta), count - 1)
        scrollToSelection()
    }

    /// Moves a screenful down (`pages` > 0) or up.
    public mutating func page(_ pages: Int) { move(by: pages * max(1, height - 1)) }

    public mutating func moveToFirst() { move(by: -count) }
    public mutating func moveToLast() { move(by: count) }

    /// Scrolls the least needed to show the selection, and never past the last row.
    private mutating func scrollToSelection() {
        if selection < top { top = selection }
        if selection >= top + height { top = selection - height + 1 }
        top = max(0, min(top, count - height))
    }
}
