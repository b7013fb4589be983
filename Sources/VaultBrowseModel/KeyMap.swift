/// A key press, as the browser sees it (the terminal layer translates its own input to this).
public enum BrowseKey: Equatable, Sendable {
    case character(Character)
    /// A control key by its letter: Ctrl-L is `.control("l")`.
    case control(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, backspace, delete, escape
}

/// What a key asks the browser to do.
public enum BrowseAction: Equatable, Sendable {
    case moveUp, moveDown, pageUp, pageDown, first, last
    /// Opens the selected folder, or shows the selected file in the pager.
    case open
    /// Goes to the parent folder.
    case goUp
    case togglePin, evict, delete, rename, filter, cycleSort, help, quit
    /// Opens the revisions of the selected file.
    case revisions
    /// Restores the selected revision (asks first).
    case restore
    /// Drops the filter (Escape).
    case clearFilter
    /// Repaints the whole screen (Ctrl-L).
    case redraw
    /// A key with no meaning here.
    case none
}

/// The browser's keys: arrows and the vi keys `hjkl` as in other terminal file browsers (ncdu,
/// nnn, ranger), and one letter per action.
public enum KeyMap {
    /// The action of `key` while browsing a folder.
    public static func action(for key: BrowseKey) -> BrowseAction {
        switch key {
        case .up, .character("k"): return .moveUp
        case .down, .character("j"): return .moveDown
        case .pageUp, .control("b"): return .pageUp
        case .pageDown, .control("f"), .character(" "): return .pageDown
        case .home, .character("g"): return .first
        case .end, .character("G"): return .last
        case .enter, .right, .character("l"): return .open
        case .left, .backspace, .character("h"): return .goUp
        case .character("p"): return .togglePin
        case .character("e"): return .evict
        case .character("d"), .delete: return .delete
        case .character("r"): return .rename
        case .character("/"): return .filter
        case .character("s"): return .cycleSort
        case .character("v"): return .revisions
        case .character("?"): return .help
        case .character("q"), .character("Q"): return .quit
        case .control("l"): return .redraw
        case .escape: return .clearFilter
        default: return .none
        }
    }

    /// The action of `key` in the revisions of a file: the same moves, Enter/→ shows the
    /// selected revision, `R` restores it, and Esc, ←, `h`, `q` go back to the folder (`goUp`).
    public static func revisionsAction(for key: BrowseKey) -> BrowseAction {
        switch key {
        case .character("R"): return .restore
        case .escape, .character("q"), .character("Q"): return .goUp
        case .character("v"): return .none
        default:
            let a = action(for: key)
            return [.moveUp, .moveDown, .pageUp, .pageDown, .first, .last, .open, .goUp, .redraw].contains(a) ? a : .none
        }
    }
}
