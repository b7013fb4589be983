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
        ("v", "a file's revisions: Enter shows one, R restores it, Esc back"),
        ("q", "quit (Ctrl-L repaints the screen)"),
    ]

    /// The state column, one mark per line.
    public static let marks: [(String, String)] = [
        ("L", "content on this device"),
        ("-", "not downloaded (on the server only)"),
        ("S", "older version: the server has a newer one (e, Enter fetches it)"),
        ("v 12%", "downloading"),
        ("P", "pinned"),
        ("^  ^ 45%", "awaiting upload (a folder: something inside); uploading"),
        ("=", "upload paused (`vault transfers resume`)"),
        ("!", "conflict (`vault conflicts`; a folder: inside), conflict copy"),
    ]

    /// The key hints of the bottom line while browsing a folder (80 columns show them whole).
    public static let hint = "Enter:open ←:up p:pin e:evict d:del r:rename v:revisions /:filter s:sort ?:help"

    /// The key hints of the bottom line in the revisions of a file.
    public static let revisionsHint = "Enter:show in $PAGER  R:restore as the current version  Esc:back"

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
