/// Which folders of an account are live (neither trashed nor below a trashed folder), kept between
/// the pages of a flat listing for as long as the account's change feed stands still: every write
/// to a file records a change, so an unchanged latest cursor means unchanged folders. A listing of
/// 1,000-node pages asked the database again, page after page, for the ancestors of the same
/// folders (about 100,000 queries for a 100,000-node account, half the server's time).
final class FolderLiveness: Sendable {
    private let accounts = Locked([String: (cursor: Int64, live: [String: Bool])]())
    /// Folders remembered per account, and accounts at once (beyond either, the oldest go).
    static let folderLimit = 100_000, accountLimit = 64

    /// What is known of `owner`'s folders at change cursor `cursor` (nothing if it moved on).
    func known(owner: String, cursor: Int64) -> [String: Bool] {
        accounts.withLock { a in a[owner].flatMap { $0.cursor == cursor ? $0.live : nil } ?? [:] }
    }

    /// Remembers `live` for `owner` at `cursor`.
    func remember(owner: String, cursor: Int64, _ live: [String: Bool]) {
        guard live.count <= Self.folderLimit else { return }
        accounts.withLock { a in
            if a[owner] == nil, a.count >= Self.accountLimit { a.removeAll() }
            a[owner] = (cursor, live)
        }
    }
}
