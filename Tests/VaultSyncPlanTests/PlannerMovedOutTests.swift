import VaultSyncPlan
import XCTest

/// docs/sync.md, "delete of a folder" when another device moved a folder out of the one deleted
/// here: what lands below the moved folder is held, on the server, by the moved folder (deleted
/// where it went), not by the folder it left. Every case runs in both orders of ids (the planner
/// takes a page's nodes in id order, so the moved folder is planned before or after what is
/// below it).
final class PlannerMovedOutTests: XCTestCase {
    struct Case {
        var fixture = PlanFixture()
        /// Remote ids of /D/F (moved out to /F on the server) and /D/F/G.
        let f: String, g: String
        let d = PlanFixture.remoteId("/D")
        /// F as the server has it now: at the top.
        var movedF: RemoteNode { fixture.remote("/F", id: f, folder: true, version: 2, recordSeq: 2) }
        /// G as its subtree lists it (unchanged).
        var listedG: RemoteNode { fixture.remote("/F/G", id: g, folder: true, version: 1, parentId: f) }
        /// A folder another device created in G.
        var created: RemoteNode { fixture.remote("/F/G/new", id: "r_n", folder: true, version: 1, parentId: g) }
    }

    /// /D/F/G and /D/keep on the server and here; this device removed /D (its delete waits).
    /// `childFirst`: G and what lands in it are planned before F.
    func movedOut(childFirst: Bool) -> Case {
        var c = Case(f: childFirst ? "r_z" : "r_b", g: childFirst ? "r_a" : "r_c")
        c.fixture.synced("/D", folder: true)
        c.fixture.synced("/D/F", id: c.f, folder: true)
        c.fixture.synced("/D/F/G", id: c.g, folder: true)
        c.fixture.synced("/D/F/G/file", id: "r_m")
        c.fixture.synced("/D/keep")
        c.fixture.synced("/x", id: "r_x")
        c.fixture.remove("/D")
        return c
    }

    /// Seed 12226: a folder created in a folder moved out of one deleted here brings the moved
    /// folder back (its subtree is listed), not the one it left; the listed subtree then lands
    /// whichever is planned first (it waited for nothing before: G was taken as still in /D).
    func testACreationBelowAFolderMovedOutOfOneDeletedHereBringsTheMovedFolderBack() throws {
        for childFirst in [false, true] {
            var c = movedOut(childFirst: childFirst)
            let first = try c.fixture.plan([c.movedF, c.created])
            XCTAssertEqual(first.needSubtrees, [c.f], "childFirst \(childFirst)")
            XCTAssertTrue(first.deferred.isEmpty)
            // The puller lists F's subtree and plans the page again.
            c = movedOut(childFirst: childFirst)
            let again = try c.fixture.plan([c.movedF, c.created, c.movedF, c.listedG, c.created], restoring: [c.f])
            XCTAssertTrue(again.deferred.isEmpty, "childFirst \(childFirst): nothing waits for a folder that never comes")
            XCTAssertNotNil(c.fixture.node("/F/G/new")); XCTAssertNotNil(c.fixture.node("/F/G"))
            XCTAssertNil(c.fixture.node("/D"))
            XCTAssertEqual(c.fixture.ops, ["delete D"], "nothing in /D changed on the server: its delete stands")
            XCTAssertEqual(again.messages.map(\.kind), [.deleteEdit])
            XCTAssertEqual(again.messages.first?.path, "/F")
        }
    }

    func testAMoveBelowAFolderMovedOutOfOneDeletedHereBringsTheMovedFolderBack() throws {
        for childFirst in [false, true] {
            var c = movedOut(childFirst: childFirst)
            let movedIn = c.fixture.remote("/F/G/x", id: "r_x", version: 2, recordSeq: 2, parentId: c.g)
            let out = try c.fixture.plan([c.movedF, movedIn])
            XCTAssertEqual(out.needSubtrees, [c.f], "childFirst \(childFirst)")
            XCTAssertTrue(out.deferred.isEmpty)
        }
    }

    func testNewContentBelowAFolderMovedOutOfOneDeletedHereBringsTheMovedFolderBack() throws {
        for childFirst in [false, true] {
            var c = movedOut(childFirst: childFirst)
            let edited = c.fixture.remote("/F/G/file", id: "r_m", version: 2, blob: "theirs", contentSeq: 2, parentId: c.g)
            let out = try c.fixture.plan([c.movedF, edited])
            XCTAssertEqual(out.needSubtrees, [c.f], "childFirst \(childFirst)")
        }
    }

    /// The contrast: renamed in place, the folder is still in /D on the server, and /D comes back.
    func testACreationBelowAFolderRenamedInsideOneDeletedHereBringsThatOneBack() throws {
        for childFirst in [false, true] {
            var c = movedOut(childFirst: childFirst)
            let renamed = c.fixture.remote("/D/F2", id: c.f, folder: true, version: 2, recordSeq: 2)
            let out = try c.fixture.plan([renamed, c.created])
            XCTAssertEqual(out.needSubtrees, [c.d], "childFirst \(childFirst)")
        }
    }

    /// A trash instead of a creation: nothing comes back; the moved folder is deleted where it went.
    func testATrashBelowAFolderMovedOutOfOneDeletedHereLeavesBothDeletes() throws {
        for childFirst in [false, true] {
            var c = movedOut(childFirst: childFirst)
            let trashed = c.fixture.remote("/F/G", id: c.g, folder: true, version: 2, trashed: true, parentId: c.f)
            let out = try c.fixture.plan([c.movedF, trashed])
            XCTAssertTrue(out.needSubtrees.isEmpty, "childFirst \(childFirst)")
            XCTAssertTrue(out.deferred.isEmpty)
            XCTAssertEqual(c.fixture.ops, ["delete D", "delete F"])
        }
    }

    /// Several pages: a creation planned in a page before the one that moves its folder out waits
    /// for that page (before, it was taken as still in /D and brought all of /D back).
    func testACreationInAnEarlierPageThanTheMoveWaitsForIt() throws {
        for childFirst in [false, true] {
            var c = movedOut(childFirst: childFirst)
            let page1 = try c.fixture.plan([c.created], upcoming: [c.f: c.movedF])
            XCTAssertEqual(page1.deferred.map(\.id), ["r_n"], "childFirst \(childFirst)")
            XCTAssertTrue(page1.needSubtrees.isEmpty)
            let page2 = try c.fixture.plan(page1.deferred + [c.movedF])
            XCTAssertEqual(page2.needSubtrees, [c.f])
        }
    }
}
