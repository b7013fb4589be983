import Foundation
import VaultAPI

/// The change feed: a start cursor and pages of changes after a cursor.
extension VaultService {
    func changesStart(_ ctx: RequestContext) throws -> RequestPlan {
        Self.respond(CursorResponse(cursor: try store.withDB { db in try db.feedCursor(owner: ctx.userId) }))
    }

    func listChanges(_ ctx: RequestContext) throws -> RequestPlan {
        let q = ctx.request.query
        guard let raw = q["cursor"], let cursor = Digits.parse(raw, maxDigits: Self.maxDigits) else {
            throw APIError.badRequest("cursor is required: a whole number from /v1/changes/start or a previous nextCursor",
                                      code: .invalidCursor)
        }
        let limit = q["limit"].map { Digits.parse($0, max: 10_000).map(Int.init) ?? 0 } ?? 1000
        guard limit >= 1 else { throw APIError.badRequest("limit must be 1…10000") }
        let list = try store.withDB { db -> ChangeList in
            guard cursor >= (try db.prunedThrough(owner: ctx.userId)) else {
                throw APIError(status: 410, code: .cursorExpired,
                               message: "this cursor is older than the retained history; do a full listing and start again")
            }
            let rows = try db.changes(owner: ctx.userId, after: cursor, limit: limit + 1)
            let page = Array(rows.prefix(limit))
            let latest = try db.feedCursor(owner: ctx.userId)
            let next = rows.count > limit ? (page.last?.cursor ?? cursor) : max(cursor, page.last?.cursor ?? cursor, latest)
            return ChangeList(changes: page.map { c in var c = c; c.file = c.file.map(lied); return c }, nextCursor: next,
                              hasMore: rows.count > limit)
        }
        return Self.respond(list)
    }
}
