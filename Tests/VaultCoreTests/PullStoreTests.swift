import Foundation
import VaultCore
import XCTest

/// The pull's store on a real vault database (`VaultPullStore`): plans applied in one transaction
/// per page with their cursor, names swapped without a unique-index clash, a listing in one
/// transaction that refuses a node whose folder never came (nothing applied), the delete guard,
/// and a STALE file that still opens (its older blob checked against its own record).
final class PullStoreTests: VaultTestCase {
    /// A server that hands out fixed pages.
    final class FakeSource: PullSource {
        var pages: [ChangesPage] = []
        var listingPages: [[RemoteNode]] = []
        var expired = false
        var start: Int64 = 0
        func startCursor() throws -> Int64 { start }
        func changes(after cursor: Int64) throws -> ChangesPage? {
            if expired { return nil }
            return pages.first { $0.nextCursor > cursor } ?? ChangesPage(nodes: [], nextCursor: cursor, hasMore: false)
        }
        var listingRefused: [RefusedNode] = []
        func listing(after token: String?) throws -> ListingPage {
            let i = token.flatMap(Int.init) ?? 0
            return ListingPage(nodes: listingPages[i], next: i + 1 < listingPages.count ? String(i + 1) : nil,
                               refused: i == 0 ? listingRefused : [])
        }
        func subtree(of remoteId: String) throws -> [RemoteNode] { [] }
    }

    static func rid(_ c: Character) -> String { String(repeating: c, count: 32) }

    func remote(_ id: String, parent: String = "root", name: String, folder: Bool = false, version: Int64 = 1,
                seq: Int64 = 1, content: ContentRecord? = nil) -> RemoteNode {
        RemoteNode(id: id, parentId: parent, name: name, isFolder: folder, version: version, trashed: false,
                   record: NodeRecord(device: "other", mtime: 1, name: name, parent: parent, seq: seq, isFolder: folder),
                   content: folder ? nil : (content ?? ContentRecord(blob: Self.rid("f"), device: "other", mime: "text/plain", mtime: 1,
                                                                     sealedSize: 60, seq: 1, sha256: String(repeating: "0", count: 64), size: 4)),
                   storedSize: folder ? 0 : 60)
    }

    func runner(force: Bool = false, maxDelete: Int = 1000) -> PullRunner {
        var n = 0
        return PullRunner(planner: SyncPlanner(settings: SyncSettings(deviceId: "me", deviceName: "laptop", today: "2024-05-01",
                                                                     newId: { n += 1; return "new-\(n)" })),
                          maxDelete: maxDelete, force: force)
    }

    func testFirstPullListsThenFollowsTheFeedPageByPageWithItsCursor() throws {
        let src = FakeSource()
        src.start = 7
        src.listingPages = [[remote(Self.rid("b"), parent: Self.rid("a"), name: "x.txt")], [remote(Self.rid("a"), name: "docs", folder: true)]]
        let r = try runner().run(src, vault.pullStore())
        XCTAssertTrue(r.listed)
        XCTAssertEqual(try vault.resolve("/docs/x.txt").contentState, .notDownloaded, "metadata first, a child before its folder")
        XCTAssertEqual(try vault.syncState([.changesCursor])[.changesCursor], "7")
        // Then the feed: a rename and a new folder, two pages.
        src.pages = [ChangesPage(nodes: [remote(Self.rid("b"), parent: Self.rid("a"), name: "y.txt", version: 2, seq: 2)], nextCursor: 8, hasMore: true),
                     ChangesPage(nodes: [remote(Self.rid("c"), name: "more", folder: true)], nextCursor: 9, hasMore: false)]
        _ = try runner().run(src, vault.pullStore())
        XCTAssertNoThrow(try vault.resolve("/docs/y.txt"))
        XCTAssertNoThrow(try vault.resolve("/more"))
        XCTAssertEqual(try vault.syncState([.changesCursor])[.changesCursor], "9")
    }

    func testNamesSwappedOnTheServerApplyWithoutAClash() throws {
        let src = FakeSource()
        src.listingPages = [[remote(Self.rid("a"), name: "a"), remote(Self.rid("b"), name: "b")]]
        _ = try runner().run(src, vault.pullStore())
        src.pages = [ChangesPage(nodes: [remote(Self.rid("a"), name: "b", version: 2, seq: 2), remote(Self.rid("b"), name: "a", version: 2, seq: 2)],
                                 nextCursor: 3, hasMore: false)]
        _ = try runner().run(src, vault.pullStore())
        XCTAssertEqual(try vault.resolve("/a").remoteId, Self.rid("b"))
        XCTAssertEqual(try vault.resolve("/b").remoteId, Self.rid("a"))
    }

    func testAListingWithAFolderThatNeverComesAppliesNothing() throws {
        let src = FakeSource()
        src.listingPages = [[remote(Self.rid("a"), name: "fine", folder: true)], [remote(Self.rid("b"), parent: Self.rid("9"), name: "orphan")]]
        XCTAssertThrowsError(try runner().run(src, vault.pullStore())) { e in XCTAssertTrue(e is SyncPlanError, "\(e)") }
        XCTAssertEqual(try vault.nodeCount(), 1, "not even the first page")
        XCTAssertNil(try vault.syncState([.changesCursor])[.changesCursor])
    }

    func testTheDeleteGuardStopsBeforeAnything() throws {
        let src = FakeSource()
        src.listingPages = [(0..<30).map { remote(Self.rid("a").dropLast(2) + String(format: "%02d", $0), name: "f\($0)") }]
        _ = try runner().run(src, vault.pullStore())
        XCTAssertEqual(try vault.nodeCount(), 31)
        src.expired = true   // a 410: the full listing again, now empty
        src.listingPages = [[]]
        XCTAssertThrowsError(try runner().run(src, vault.pullStore())) { e in XCTAssertTrue(e is DeleteGuardTripped, "\(e)") }
        XCTAssertEqual(try vault.nodeCount(), 31, "nothing removed")
        _ = try runner(force: true).run(src, vault.pullStore())
        XCTAssertEqual(try vault.nodeCount(), 1)
    }

    func testAnOlderVersionStillOpensAndSaysSo() throws {
        var n = try vault.put(localFile: try file("n", size: 100), to: "/notes.txt")
        let e = try XCTUnwrap(try vault.outbox().first)
        try vault.completeOutboxEntry(e, .uploaded(remoteId: Self.rid("d"), version: 1, blobId: n.localPath!))
        n = try vault.resolve("/notes.txt")
        try vault.setSyncState([(.changesCursor, "1")])
        let src = FakeSource()
        src.pages = [ChangesPage(nodes: [remote(n.remoteId!, name: "notes.txt", version: 2, seq: 1,
                                                content: ContentRecord(blob: Self.rid("e"), device: "other", mime: "text/plain", mtime: 2,
                                                                       sealedSize: 80, seq: 2, sha256: String(repeating: "1", count: 64), size: 12))],
                                 nextCursor: 2, hasMore: false)]
        _ = try runner().run(src, vault.pullStore())
        let stale = try vault.resolve("/notes.txt")
        XCTAssertEqual(stale.contentState, .stale)
        XCTAssertEqual(stale.size, 12, "the node describes the server's head")
        XCTAssertEqual(try vault.readContent(stale) { _ in }, 100, "the older blob opens, checked against its own size and SHA-256")
        XCTAssertEqual(try vault.pinnedFilesToDownload(), [])
        try vault.setPinned("/notes.txt", true)
        XCTAssertEqual(try vault.pinnedFilesToDownload(), [stale.id], "a pinned older version downloads")
    }
}
