/// Why the terminal cannot be used full-screen.
public struct TerminalError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// Standard input or output is not a terminal.
        case notATerminal
        /// The terminal type is unknown or cannot address the cursor (`TERM=dumb`).
        case unsupported
    }
    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }

    public var description: String { message }
}
