import Foundation
import VaultCore
import XCTest

/// Refused nodes (`RefusedNode`) on a real vault database: quarantined with the rest applied, a
/// later valid record or a listing without them clears them, a refused node's local copy is not
/// swept, and a node below a refused folder stops the pull with nothing applied.
extension PullStoreTests {
    static func refusal(_ c: Character) -> RefusedNode { RefusedNode(id: rid(c), reason: "node \(rid(c)) on the server is not end-to-end encrypted") }

    func testARefusedNodeIsQuarantinedTheRestAppliedAndAValidRecordClearsIt() throws {
        let src = FakeSource()
        src.listingPages = [[remote(Self.rid("a"), name: "a")]]
        _ = try runner().run(src, vault.pullStore())
        src.pages = [ChangesPage(nodes: [remote(Self.rid("b"), name: "b")], nextCursor: 2, hasMore: true, refused: [Self.refusal("c")]),
                     ChangesPage(nodes: [remote(Self.rid("d"), name: "d")], nextCursor: 3, hasMore: false)]
        let r = try runner().run(src, vault.pullStore())
        XCTAssertEqual(r.refused, [Self.refusal("c")])
        XCTAssertEqual(try vault.quarantinedNodes().map(\.id), [Self.rid("c")])
        XCTAssertNoThrow(try vault.resolve("/b"))
        XCTAssertNoThrow(try vault.resolve("/d"))
        XCTAssertEqual(try vault.syncState([.changesCursor])[.changesCursor], "3")
        // A later valid record of it clears it (and one refused after its valid one stays refused).
        src.pages = [ChangesPage(nodes: [remote(Self.rid("c"), name: "c")], nextCursor: 4, hasMore: true),
                     ChangesPage(nodes: [], nextCursor: 5, hasMore: false, refused: [Self.refusal("e")])]
        XCTAssertEqual(try runner().run(src, vault.pullStore()).refused, [Self.refusal("e")])
        XCTAssertEqual(try vault.quarantinedNodes().map(\.id), [Self.rid("e")])
        XCTAssertNoThrow(try vault.resolve("/c"))
    }

    func testANodeBelowARefusedFolderStopsThePull() throws {
        let src = FakeSource()
        src.listingPages = [[]]
        _ = try runner().run(src, vault.pullStore())
        src.pages = [ChangesPage(nodes: [remote(Self.rid("b"), name: "b")], nextCursor: 2, hasMore: true, refused: [Self.refusal("c")]),
                     ChangesPage(nodes: [remote(Self.rid("d"), parent: Self.rid("c"), name: "d")], nextCursor: 3, hasMore: false)]
        XCTAssertThrowsError(try runner().run(src, vault.pullStore())) { e in XCTAssertTrue("\(e)".contains("refused: the rest depends on it"), "\(e)") }
        XCTAssertEqual(try vault.nodeCount(), 1, "nothing applied")
        XCTAssertEqual(try vault.quarantinedNodes(), [])
        // One quarantined by an earlier pull counts too.
        src.pages = [ChangesPage(nodes: [], nextCursor: 2, hasMore: false, refused: [Self.refusal("c")])]
        _ = try runner().run(src, vault.pullStore())
        src.pages = [ChangesPage(nodes: [remote(Self.rid("d"), parent: Self.rid("c"), name: "d")], nextCursor: 3, hasMore: false)]
        XCTAssertThrowsError(try runner().run(src, vault.pullStore())) { e in XCTAssertTrue("\(e)".contains("refused: the rest depends on it"), "\(e)") }
        XCTAssertEqual(try vault.syncState([.changesCursor])[.changesCursor], "2")
    }

    func testAListingKeepsARefusedNodesLocalCopyAndReplacesTheQuarantine() throws {
        let src = FakeSource()
        src.listingPages = [[remote(Self.rid("a"), name: "a"), remote(Self.rid("b"), name: "b")]]
        src.listingRefused = [Self.refusal("z")]
        _ = try runner().run(src, vault.pullStore())
        XCTAssertEqual(try vault.quarantinedNodes().map(\.id), [Self.rid("z")])
        // A new listing (a 410) where b no longer authenticates and z is gone.
        src.expired = true
        src.listingPages = [[remote(Self.rid("a"), name: "a")]]
        src.listingRefused = [Self.refusal("b")]
        XCTAssertEqual(try runner().run(src, vault.pullStore()).refused, [Self.refusal("b")])
        XCTAssertNoThrow(try vault.resolve("/b"), "what this device had of b stays")
        XCTAssertEqual(try vault.quarantinedNodes().map(\.id), [Self.rid("b")])
        // One with a child below a refused folder applies nothing.
        src.listingPages = [[remote(Self.rid("d"), parent: Self.rid("b"), name: "d")]]
        XCTAssertThrowsError(try runner().run(src, vault.pullStore())) { e in XCTAssertTrue(e is SyncPlanError, "\(e)") }
        XCTAssertThrowsError(try vault.resolve("/b/d"))
    }
}
