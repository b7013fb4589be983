/// The order of a folder's entries; folders always come first.
public enum SortOrder: String, CaseIterable, Sendable {
    /// By name, A to Z, ignoring case.
    case name
    /// Largest first (a folder by what it holds).
    case size
    /// Most recently modified first.
    case time

    /// The next order (`s` cycles name → size → time → name).
    public var next: SortOrder {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }

    /// Whether `a` comes before `b`.
    func precedes(_ a: BrowseEntry, _ b: BrowseEntry) -> Bool {
        if a.isFolder != b.isFolder { return a.isFolder }
        switch self {
        case .size where a.size != b.size: return a.size > b.size
        case .time where a.modifiedAt != b.modifiedAt: return a.modifiedAt > b.modifiedAt
        default: break
        }
        let (x, y) = (a.name.lowercased(), b.name.lowercased())
        if x != y { return x < y }
        return a.name != b.name ? a.name < b.name : a.id < b.id
    }
}

/// The entries of the folder being browsed: sorted, filtered, with the selection and the
/// scroll position kept consistent with a viewport of `height` rows (`ListScroll`). A plain
/// value: every change is a method, and the invariants hold after each.
public struct BrowseList: Equatable, Sendable {
    public private(set) var entries: [BrowseEntry] = []
    /// The entries shown: sorted, and only those whose name contains `filter` (ignoring case).
    public private(set) var visible: [BrowseEntry] = []
    /// The selection in `visible` and the scroll position.
    public private(set) var scroll = ListScroll()

    public var sort: SortOrder = .name { didSet { rebuild(keeping: selected?.id) } }
    public var filter: String = "" { didSet { rebuild(keeping: selected?.id) } }
    /// Rows on screen for the list.
    public var height: Int {
        get { scroll.height }
        set { scroll.height = newValue }
    }

    public init(entries: [BrowseEntry] = [], height: Int = 1) {
        scroll.height = height
        self.entries = entries
        rebuild(keeping: nil)
    }

    /// The index in `visible` of the selected entry (0 when none is shown).
    public var selection: Int { scroll.selection }
    /// The index in `visible` of the first row on screen.
    public var top: Int { scroll.top }

    /// The selected entry, if any is shown.
    public var selected: BrowseEntry? { visible.indices.contains(selection) ? visible[selection] : nil }

    /// The entries on screen, in order.
    public var rows: ArraySlice<BrowseEntry> { visible[scroll.rows] }

    /// Replaces the entries (a refresh, another folder), keeping the selection on the same
    /// entry when it is still shown (else on `select`, else at the same position).
    public mutating func replace(_ new: [BrowseEntry], select id: String? = nil) {
        let keep = id ?? selected?.id
        let oldIndex = selection
        entries = new
        rebuild(keeping: keep, fallback: oldIndex)
    }

    /// Selects the entry with `id` when it is shown.
    public mutating func select(id: String) {
        if let i = visible.firstIndex(where: { $0.id == id }) { scroll.reset(count: visible.count, selection: i) }
    }

    /// Moves the selection by `delta` rows (negative: up), stopping at the ends.
    public mutating func move(by delta: Int) { scroll.move(by: delta) }

    /// Moves a screenful down (`pages` > 0) or up.
    public mutating func page(_ pages: Int) { scroll.page(pages) }

    public mutating func moveToFirst() { scroll.moveToFirst() }
    public mutating func moveToLast() { scroll.moveToLast() }

    private mutating func rebuild(keeping id: String?, fallback: Int? = nil) {
        let needle = filter.lowercased()
        visible = entries.filter { needle.isEmpty || $0.name.lowercased().contains(needle) }
            .sorted(by: sort.precedes)
        let index = id.flatMap { id in visible.firstIndex { $0.id == id } } ?? fallback ?? 0
        scroll.reset(count: visible.count, selection: index)
    }
}
