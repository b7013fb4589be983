/// The help screen (`?`): keys and what the marks mean.
public enum BrowseHelp {
    /// The keys, one per line.
    public static let keys: [(String, String)] = [
        ("↑ ↓  k j", "move (PgUp PgDn, Space, g G: page, first, last)"),
        ("Enter → l", "open a folder, or show a file in $PAGER (downloads it first)"),
        ("← h Backspace", "go up to the parent folder"),
        ("p", "pin / unpin (pinned content stays offline, never evicted)"),
        ("e", "evict the cached content (it stays on the server)"),
        ("d", "delete (asks first)"),
        ("r", "rename"),
        ("/", "filter by name (Enter keeps it, Esc clears it)"),
        ("s", "sort by name, size, time"),
        ("q", "quit (Ctrl-L repaints the screen)"),
        ("(revisions)", "restoring older versions comes with two-way sync"),
    ]

    /// The state column, one mark per line.
    public static let marks: [(String, String)] = [
        ("L", "content on this device"),
        ("-", "not downloaded (on the server only)"),
        ("S", "an older version is on this device (stale)"),
        ("v 12%", "downloading"),
        ("P", "pinned"),
        ("^  ^ 45%", "awaiting upload (a folder: something inside); uploading"),
        ("=", "upload paused (`vault transfers resume`)"),
        ("!", "conflict: the server has a newer version"),
    ]

    /// The help as lines of text.
    public static var lines: [String] {
        var out = ["vault browse: keys (any key returns)"]
        out += keys.map { pad($0.0, 15) + $0.1 }
        out += ["", "The state column"]
        out += marks.map { "  " + pad($0.0, 13) + $0.1 }
        return out
    }

    private static func pad(_ s: String, _ n: Int) -> String {
        s + String(repeating: " ", count: max(1, n - s.count))
    }
}
