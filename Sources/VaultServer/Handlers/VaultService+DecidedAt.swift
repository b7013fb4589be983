import VaultAPI
import VaultSQL

/// A folder delete that names the change-feed cursor it was decided on (`X-Vault-Decided-At`):
/// refused with 412 `subtree_changed` when anything below the folder changed after that cursor,
/// so a delete delayed in the network never trashes what another device put there since
/// (docs/server.md "Folder deletes", docs/sync.md "Pushing").
extension VaultService {
    /// The `X-Vault-Decided-At` cursor, nil when the header is absent; 400 `invalid_cursor` when
    /// it is not a cursor (1–18 ASCII digits).
    static func decidedAt(_ request: HTTPRequest) throws -> Int64? {
        guard let raw = request.header("x-vault-decided-at") else { return nil }
        guard let cursor = Digits.parse(raw, maxDigits: maxDigits) else {
            throw APIError.badRequest("X-Vault-Decided-At must be a change-feed cursor (a whole number from /v1/changes)",
                                      code: .invalidCursor)
        }
        return cursor
    }

    /// Throws 412 `subtree_changed` when folder `file` is to be trashed on a decision made at
    /// `cursor` and a change after it touched a node that is below the folder now (created, moved
    /// in, renamed, given content, restored), or when the cursor is older than the retained
    /// history (what changed cannot be told). A file has nothing below it: no check.
    func checkSubtreeUnchanged(_ db: any SQLConnection, owner: String, _ file: FileResource, decidedAt cursor: Int64?) throws {
        guard let cursor, file.type == .folder else { return }
        guard cursor >= (try db.prunedThrough(owner: owner)) else {
            throw APIError.subtreeChanged("cursor \(cursor) is older than the retained history: what changed below the folder since cannot be told; pull the changes (a full listing) and decide again")
        }
        if try db.changedBelow(owner: owner, folder: file.id, after: cursor) {
            throw APIError.subtreeChanged("something below the folder changed after cursor \(cursor); pull the changes and decide again")
        }
    }
}

extension APIError {
    /// 412 `subtree_changed`: a folder delete decided on a cursor after which something below
    /// the folder changed (the body is the error, not the file: the folder itself is unchanged).
    static func subtreeChanged(_ message: String) -> APIError {
        APIError(status: 412, code: .subtreeChanged, message: message)
    }
}
