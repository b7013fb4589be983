/// One line `vault agent listen` prints on standard output for the agent (`ChangeFeed`): the
/// push channel opened, or an event arrived.
public enum ListenLine: Equatable, Sendable {
    /// `open`: the server accepted the stream.
    case open
    /// `event <id>`: an event, with the server's id (`-` on the line when it had none).
    case event(id: String?)

    /// The line as printed, without its newline.
    public var text: String {
        switch self {
        case .open: return "open"
        case .event(let id): return "event " + (id ?? "-")
        }
    }

    /// The line `text` (without its newline), or nil for one this version does not know.
    public init?(text: String) {
        let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
        switch parts.first {
        case "open": self = .open
        case "event": self = .event(id: parts.count > 1 && parts[1] != "-" ? parts[1] : nil)
        default: return nil
        }
    }
}

/// What the exit code of `vault agent listen` tells the agent (any other code: a failure).
public enum ListenExit {
    /// The server ended the stream (reconnect soon).
    public static let ended: Int32 = 0
    /// Any other failure (reconnect after a backoff).
    public static let failed: Int32 = 1
    /// The vault is locked (the exit code of a `.locked` `VaultError`).
    public static let locked: Int32 = 3
    /// The vault is not logged in to a server (the exit code of a `.notFound` `VaultError`):
    /// stop listening.
    public static let notLoggedIn: Int32 = 4
    /// The server refused the token (reconnect at once with `--refresh-token`); EX_TEMPFAIL.
    public static let tokenRefused: Int32 = 75
}
