import VaultCore

/// A one-line text editor (the filter, a new name): insert at the cursor, Backspace and Delete,
/// ←/→, Home/End (also Ctrl-A/Ctrl-E), Ctrl-U clears; Enter accepts, Escape cancels.
public struct LineEditor: Equatable, Sendable {
    /// What a key did.
    public enum Outcome: Equatable, Sendable {
        case editing
        case accepted(String)
        case cancelled
    }

    public private(set) var characters: [Character]
    /// The cursor, as an index into `characters` (0…count).
    public private(set) var cursor: Int

    public init(_ text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    public var text: String { String(characters) }

    /// Applies `key`.
    public mutating func handle(_ key: BrowseKey) -> Outcome {
        switch key {
        case .enter: return .accepted(text)
        case .escape: return .cancelled
        case .character(let c):
            characters.insert(c, at: cursor); cursor += 1
        case .backspace:
            if cursor > 0 { characters.remove(at: cursor - 1); cursor -= 1 }
        case .delete, .control("d"):
            if cursor < characters.count { characters.remove(at: cursor) }
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(characters.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .control("u"): characters.removeAll(); cursor = 0
        default: break
        }
        return .editing
    }

    /// The part of the text to show in `width` cells with the cursor on screen, and the
    /// cursor's cell within it. Each character is shown escaped (`DisplayText`: a pasted
    /// control or bidirectional override is written out, never acted on); `cells` measures a
    /// piece of text (the terminal's width rules).
    public func window(width: Int, cells: (String) -> Int) -> (text: String, cursorColumn: Int) {
        guard width > 1 else { return ("", 0) }
        let shown = characters.map { DisplayText.escaped(String($0)) }
        var start = 0
        // Drop characters from the left until the text up to the cursor fits (one cell is kept for the cursor).
        while start < cursor && cells(shown[start..<cursor].joined()) > width - 1 { start += 1 }
        return (shown[start...].joined(), cells(shown[start..<cursor].joined()))
    }
}
