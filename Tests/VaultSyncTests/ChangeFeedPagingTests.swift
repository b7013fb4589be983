import Foundation
import XCTest
@testable import VaultCore
@testable import VaultSync
import VaultPrimitives

/// The pull's reading of the server, page by page: the change feed's cursors and `hasMore`, the
/// listing's page tokens, and a pull of several pages applied whole.
final class ChangeFeedPagingTests: SyncTestCase {
    let names = ["p1", "p2", "p3", "p4", "p5"]

    func puller(_ c: SyncClient, pageSize: Int) -> RemotePuller {
        RemotePuller(api: c.api, codec: vault.remoteCodec, retry: RetryPolicy(), pageSize: pageSize) { _ in }
    }

    func pushFiles(_ c: SyncClient) throws {
        for n in names { _ = try put(n, size: 10) }
        XCTAssertEqual(try c.push(concurrency: 1).done, names.count)
    }

    /// Five changes read two at a time: three pages, each cursor past the last, `hasMore` until
    /// the end; the end's cursor then reads nothing more.
    func testTheChangeFeedIsReadPageByPageToItsEnd() throws {
        let c = try client()
        let p = puller(c, pageSize: 2)
        let start = try p.startCursor()
        try pushFiles(c)
        var cursor = start, pages = 0, seen: [String] = []
        while true {
            let page = try XCTUnwrap(try p.changes(after: cursor), "the feed answered 410 for a fresh cursor")
            pages += 1
            XCTAssertLessThanOrEqual(page.nodes.count, 2)
            XCTAssertGreaterThan(page.nextCursor, cursor, "page \(pages) moved the cursor on")
            cursor = page.nextCursor
            seen += page.nodes.map(\.name)
            if !page.hasMore { break }
            XCTAssertLessThan(pages, 20, "the feed never ends")
        }
        XCTAssertGreaterThanOrEqual(pages, 3)
        XCTAssertTrue(Set(names).isSubset(of: Set(seen)), "\(seen)")
        let end = try XCTUnwrap(try p.changes(after: cursor))
        XCTAssertEqual(end.nodes.count, 0)
        XCTAssertFalse(end.hasMore)
        XCTAssertEqual(end.nextCursor, cursor)
    }

    /// The listing followed through its page tokens names every node once.
    func testTheListingFollowsItsPageTokens() throws {
        let c = try client()
        try pushFiles(c)
        let p = puller(c, pageSize: 2)
        defer { p.finish() }
        var token: String?, pages = 0, seen: [String] = []
        repeat {
            let page = try p.listing(after: token)
            pages += 1
            XCTAssertLessThanOrEqual(page.nodes.count, 2)
            seen += page.nodes.map(\.name)
            token = page.next
            XCTAssertLessThan(pages, 20, "the listing never ends")
        } while token != nil
        XCTAssertGreaterThanOrEqual(pages, 3)
        XCTAssertEqual(seen.sorted(), names, "every node once")
    }

    /// A pull asked to read two changes a page stores the feed's end as its cursor: the pull
    /// after it finds nothing to apply.
    func testAPullOfSeveralPagesEndsAtTheFeedsEnd() throws {
        let c = try client()
        try pushFiles(c)
        c.pullPage = 2
        _ = try c.pull(policy: .keepBoth)
        let again = try c.pull(policy: .keepBoth)
        XCTAssertEqual(again.applied, 0)
        XCTAssertEqual(again.removed, 0)
        XCTAssertEqual(try vault.children(of: Vault.rootId).map(\.name).sorted(), names)
    }
}
