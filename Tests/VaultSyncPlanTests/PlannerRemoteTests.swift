import VaultSyncPlan
import XCTest

/// docs/sync.md, "Applying a remote change to a synced node": one test per row.
final class PlannerRemoteTests: XCTestCase {
    func testCreatedAppearsMetadataFirstUnderItsParent() throws {
        var f = PlanFixture()
        f.synced("/docs", folder: true)
        // The child comes before its parent in the page: it waits for it within the page.
        try f.plan([f.remote("/docs/new/a.txt"), f.remote("/docs/new", folder: true)])
        let a = try XCTUnwrap(f.node("/docs/new/a.txt"))
        XCTAssertEqual(a.contentState, .notDownloaded)
        XCTAssertEqual(a.remoteId, PlanFixture.remoteId("/docs/new/a.txt"))
        XCTAssertEqual(a.sha256, "sha-b" + PlanFixture.remoteId("/docs/new/a.txt"))
        XCTAssertTrue(f.state.outbox.isEmpty, "nothing to push")
    }

    func testRenamedOrMovedFollows() throws {
        var f = PlanFixture()
        f.synced("/a", folder: true); f.synced("/b", folder: true); f.synced("/a/x")
        try f.plan([f.remote("/b/y", id: PlanFixture.remoteId("/a/x"), recordSeq: 2)])
        XCTAssertNil(f.node("/a/x"))
        XCTAssertEqual(f.node("/b/y")?.contentState, .local, "the content stays")
    }

    func testNewContentMakesLocalStaleAndLeavesNotDownloaded() throws {
        var f = PlanFixture()
        f.synced("/x"); f.synced("/y", contentState: .notDownloaded)
        try f.plan([f.remote("/x", blob: "new", contentSeq: 2), f.remote("/y", blob: "new2", contentSeq: 2)])
        let x = try XCTUnwrap(f.node("/x")), y = try XCTUnwrap(f.node("/y"))
        XCTAssertEqual(x.contentState, .stale)
        XCTAssertEqual(x.localPath, "b" + PlanFixture.remoteId("/x"), "the older blob still opens")
        XCTAssertEqual(x.sha256, "sha-new", "the node describes the server's head")
        XCTAssertEqual(y.contentState, .notDownloaded)
        XCTAssertEqual(y.sha256, "sha-new2")
        // A restore to the version this device holds makes it current again.
        try f.plan([f.remote("/x", version: 3, blob: "b" + PlanFixture.remoteId("/x"), contentSeq: 3)])
        XCTAssertEqual(f.node("/x")?.contentState, .local)
    }

    func testTrashedRemovesTheSubtree() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/e", folder: true); f.synced("/d/e/x"); f.synced("/keep")
        let out = try f.plan([f.remote("/d", folder: true, trashed: true)])
        XCTAssertNil(f.node("/d")); XCTAssertNil(f.node("/d/e/x"))
        XCTAssertNotNil(f.node("/keep"))
        XCTAssertEqual(out.removed, 3, "counted for the delete guard")
        XCTAssertNil(try f.state.base(remoteId: PlanFixture.remoteId("/d/e/x")))
    }

    func testANewNodeRecordWithoutNewContentCarriesItsTime() throws {
        var f = PlanFixture()
        f.synced("/t"); f.synced("/c")
        // /t: a newer node record from another device over the same content (a time set there,
        // sent as a move to where it is); /c: a new record with new content, whose time stands.
        try f.plan([f.remote("/t", recordSeq: 2), f.remote("/c", recordSeq: 2, blob: "new", contentSeq: 2)])
        XCTAssertEqual(f.node("/t")?.modifiedAt, 5, "the node record's time")
        XCTAssertEqual(f.node("/c")?.modifiedAt, 1, "the content record's time")
    }

    func testAnEchoOrADuplicateChangesNothing() throws {
        var f = PlanFixture()
        f.synced("/x", version: 4)
        let before = f.node("/x")
        // This device's own change (version 4) and an older duplicate.
        try f.plan([f.remote("/y", id: PlanFixture.remoteId("/x"), version: 4, recordSeq: 2)])
        XCTAssertEqual(f.node("/x"), before)
    }

    func testRollbackIsAnIntegrityError() throws {
        var f = PlanFixture()
        f.synced("/x")
        try f.plan([f.remote("/x", version: 5, recordSeq: 3, contentSeq: 4)])
        let snapshot = f.state
        XCTAssertThrowsError(try f.plan([f.remote("/x", version: 6, recordSeq: 2, contentSeq: 4)]))
        f.state = snapshot
        XCTAssertThrowsError(try f.plan([f.remote("/x", version: 6, recordSeq: 3, contentSeq: 3)]))
        f.state = snapshot
        XCTAssertThrowsError(try f.plan([f.remote("/x", version: 4, recordSeq: 3, contentSeq: 4)]))
    }

    func testAChildOfAFolderTrashedLaterInTheFeedGoesWithIt() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true)
        let child = f.remote("/d/new")
        try f.plan([child], upcoming: [PlanFixture.remoteId("/d"): f.remote("/d", folder: true, trashed: true)])
        XCTAssertNil(f.node("/d/new"), "not created under a folder that goes")
    }

    func testAParentThatNeverCameWaits() throws {
        var f = PlanFixture()
        let out = try f.plan([f.remote("/ghost/x")])
        XCTAssertEqual(out.deferred.map(\.name), ["x"])
        XCTAssertNil(f.node("/ghost/x"))
    }

    func testAListingPlacesChildrenBeforeTheirParentArrives() throws {
        var f = PlanFixture()
        try f.plan([f.remote("/p/x")], mode: .listing)
        try f.plan([f.remote("/p", folder: true)], mode: .listing)
        XCTAssertEqual(f.node("/p/x")?.remoteId, PlanFixture.remoteId("/p/x"))
    }

    func testNamesSwappedOnTheServerLandWithoutACollision() throws {
        var f = PlanFixture()
        f.synced("/a"); f.synced("/b")
        try f.plan([f.remote("/b", id: PlanFixture.remoteId("/a"), recordSeq: 2), f.remote("/a", id: PlanFixture.remoteId("/b"), recordSeq: 2)])
        XCTAssertEqual(f.node("/a")?.remoteId, PlanFixture.remoteId("/b"))
        XCTAssertEqual(f.node("/b")?.remoteId, PlanFixture.remoteId("/a"))
        XCTAssertTrue(f.state.outbox.isEmpty)
    }

    func testAMoveOutOfAFolderTrashedInTheSamePageKeepsTheNode() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/x")
        try f.plan([f.remote("/d", folder: true, trashed: true), f.remote("/x", id: PlanFixture.remoteId("/d/x"), recordSeq: 2)])
        XCTAssertNil(f.node("/d"))
        XCTAssertEqual(f.node("/x")?.contentState, .local, "moved out before its folder went, with its content")
    }

    func testACycleFromTheServerAloneIsAnIntegrityError() throws {
        var f = PlanFixture()
        f.synced("/a", folder: true); f.synced("/a/b", folder: true)
        XCTAssertThrowsError(try f.plan([f.remote("/a/b/a", id: PlanFixture.remoteId("/a"), folder: true, recordSeq: 2,
                                                  parentId: PlanFixture.remoteId("/a/b"))]))
    }

    func testThePlanReplaysOntoTheStoredState() throws {
        var f = PlanFixture()
        f.synced("/a", folder: true); f.synced("/a/x"); f.synced("/b"); f.newFile("/b2", blob: "n1")
        let before = f.state
        try f.plan([f.remote("/a", folder: true, trashed: true), f.remote("/c", id: PlanFixture.remoteId("/b"), recordSeq: 2),
                    f.remote("/b2"), f.remote("/new", folder: true)])
        var replayed = before
        try replayed.apply(try f.state.actions(since: before))
        for path in ["/a", "/c", "/b2", "/new"] { XCTAssertEqual(replayed.nodeForTest(path), f.node(path), path) }
        XCTAssertEqual(replayed.outbox, f.state.outbox)
        XCTAssertEqual(replayed.tombstones, f.state.tombstones)
    }
}

extension PlanState {
    func nodeForTest(_ path: String) -> Node? {
        var cur = try! node(id: Node.rootId)!
        for part in path.split(separator: "/") {
            guard let next = try! child(of: cur.id, named: String(part)) else { return nil }
            cur = next
        }
        return cur
    }
}
