import VaultSyncPlan
import XCTest

/// docs/sync.md, "Conflicts" and "Name collisions": one test per row.
final class PlannerConflictTests: XCTestCase {
    let copyName = "x (conflict from laptop 2024-05-01).txt"

    func testEditVersusEditKeepBoth() throws {
        var f = PlanFixture()
        f.synced("/x.txt"); f.edit("/x.txt", blob: "mine")
        let out = try f.plan([f.remote("/x.txt", version: 3, blob: "theirs", contentSeq: 2)])
        let x = try XCTUnwrap(f.node("/x.txt")), copy = try XCTUnwrap(f.node("/" + copyName))
        XCTAssertEqual(x.sha256, "sha-theirs"); XCTAssertEqual(x.contentState, .notDownloaded); XCTAssertEqual(x.version, 3)
        XCTAssertEqual(copy.localPath, "mine"); XCTAssertNil(copy.remoteId)
        XCTAssertEqual(f.state.outbox.map(\.nodeId), [copy.id], "the local content is uploaded as its own file")
        XCTAssertNil(f.state.outbox[0].payload.remoteId)
        XCTAssertEqual(f.state.blobOwners["mine"], copy.id)
        XCTAssertEqual(out.messages.map(\.kind), [.editEdit])
    }

    func testEditVersusEditLastWriterWins() throws {
        var f = PlanFixture()
        f.policy = .lastWriterWins
        f.synced("/x.txt"); f.edit("/x.txt", blob: "mine")
        let before = f.state.outbox[0]
        let out = try f.plan([f.remote("/x.txt", version: 3, blob: "theirs", contentSeq: 2)])
        let x = try XCTUnwrap(f.node("/x.txt"))
        XCTAssertEqual(x.localPath, "mine"); XCTAssertEqual(x.version, 3, "rebased on the server's version")
        XCTAssertEqual(f.state.outbox.count, 1)
        XCTAssertNotEqual(f.state.outbox[0].requestId, before.requestId, "a new session against the new version")
        XCTAssertEqual(out.messages.map(\.kind), [.editEdit])
    }

    func testNewContentVersusTrashedRecreatesTheFileAndItsFolders() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/x"); f.synced("/d/other"); f.edit("/d/x", blob: "mine")
        let out = try f.plan([f.remote("/d", folder: true, version: 2, trashed: true)])
        let d = try XCTUnwrap(f.node("/d")), x = try XCTUnwrap(f.node("/d/x"))
        XCTAssertNil(d.remoteId); XCTAssertNil(x.remoteId)
        XCTAssertNil(f.node("/d/other"), "unchanged content goes with the folder")
        XCTAssertEqual(f.ops, ["create_folder d", "upload x"], "the folder is created before the file goes in")
        XCTAssertNil(f.state.outbox[1].payload.remoteId, "a new file, not a revision of the trashed one")
        XCTAssertEqual(out.messages.map(\.kind), [.folderRecreated])
        XCTAssertEqual(out.removed, 1)
    }

    func testDeleteVersusNewContentBringsTheFileBack() throws {
        var f = PlanFixture()
        f.synced("/x"); f.remove("/x")
        let out = try f.plan([f.remote("/x", version: 3, blob: "theirs", contentSeq: 2)])
        XCTAssertEqual(f.node("/x")?.contentState, .notDownloaded)
        XCTAssertTrue(f.state.outbox.isEmpty, "the local delete is dropped")
        XCTAssertTrue(f.state.tombstones.isEmpty)
        XCTAssertEqual(out.messages.map(\.kind), [.deleteEdit])
    }

    func testDeleteVersusMovedDeletesAgainstTheNewVersion() throws {
        var f = PlanFixture()
        f.synced("/x"); f.remove("/x")
        try f.plan([f.remote("/y", id: PlanFixture.remoteId("/x"), version: 3, recordSeq: 2)])
        XCTAssertNil(f.node("/y"))
        XCTAssertEqual(f.ops, ["delete x"])
        XCTAssertEqual(f.state.tombstones.values.first?.version, 3)
    }

    func testDeleteVersusTrashedLeavesNothingToDo() throws {
        var f = PlanFixture()
        f.synced("/x"); f.remove("/x")
        try f.plan([f.remote("/x", version: 3, trashed: true)])
        XCTAssertTrue(f.state.outbox.isEmpty); XCTAssertTrue(f.state.tombstones.isEmpty)
    }

    func testMoveVersusMoveKeepsThisDevicesPlacement() throws {
        var f = PlanFixture()
        f.synced("/a", folder: true); f.synced("/x"); f.move("/x", to: "/a/mine")
        let out = try f.plan([f.remote("/theirs", id: PlanFixture.remoteId("/x"), version: 3, recordSeq: 2)])
        XCTAssertEqual(f.node("/a/mine")?.version, 3, "rebased")
        XCTAssertNil(f.node("/theirs"))
        XCTAssertEqual(f.ops, ["move mine"])
        XCTAssertEqual(out.messages.map(\.kind), [.moveMove])
    }

    func testMoveIntoAFolderTrashedOnTheServerGoesBackWhereTheServerHasIt() throws {
        var f = PlanFixture()
        f.synced("/a", folder: true); f.synced("/x"); f.move("/x", to: "/a/x")
        try f.plan([f.remote("/a", folder: true, trashed: true)])
        // x moved into a, which is gone: the folder is re-created with it (a new child).
        XCTAssertNotNil(f.node("/a/x"))
        XCTAssertNil(f.node("/a")?.remoteId)
        XCTAssertEqual(f.ops, ["create_folder a", "move x"])
    }

    func testMoveVersusTrashedTheDeleteWins() throws {
        var f = PlanFixture()
        f.synced("/x"); f.move("/x", to: "/y")
        let out = try f.plan([f.remote("/x", version: 3, trashed: true)])
        XCTAssertNil(f.node("/y")); XCTAssertTrue(f.state.outbox.isEmpty)
        XCTAssertEqual(out.messages.map(\.kind), [.moveDelete])
    }

    func testMoveVersusNewContentBothApply() throws {
        var f = PlanFixture()
        f.synced("/x"); f.move("/x", to: "/y")
        try f.plan([f.remote("/x", version: 3, blob: "theirs", contentSeq: 2)])
        let y = try XCTUnwrap(f.node("/y"))
        XCTAssertEqual(y.sha256, "sha-theirs"); XCTAssertEqual(y.contentState, .stale); XCTAssertEqual(y.version, 3)
        XCTAssertEqual(f.ops, ["move y"])
    }

    func testNewContentVersusMovedBothApply() throws {
        var f = PlanFixture()
        f.synced("/a", folder: true); f.synced("/x"); f.edit("/x", blob: "mine")
        let out = try f.plan([f.remote("/a/z", id: PlanFixture.remoteId("/x"), version: 3, recordSeq: 2)])
        let z = try XCTUnwrap(f.node("/a/z"))
        XCTAssertEqual(z.localPath, "mine"); XCTAssertEqual(z.version, 3)
        XCTAssertEqual(f.ops, ["upload x"], "the upload goes to the node wherever it is now")
        XCTAssertTrue(out.messages.isEmpty)
    }

    func testNewChildVersusFolderTrashedRecreatesTheFolder() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/old"); f.newFolder("/d/sub"); f.newFile("/d/sub/n", blob: "n1")
        f.synced("/elsewhere"); f.move("/elsewhere", to: "/d/moved")
        try f.plan([f.remote("/d", folder: true, trashed: true)])
        XCTAssertNil(f.node("/d/old"))
        XCTAssertNotNil(f.node("/d/sub/n")); XCTAssertNotNil(f.node("/d/moved"))
        XCTAssertNotNil(f.node("/d/moved")?.remoteId, "a node moved in from elsewhere keeps its id")
        let ops = f.ops
        XCTAssertEqual(Set(ops), ["create_folder d", "create_folder sub", "upload n", "move moved"])
        XCTAssertEqual(ops.first, "create_folder d", "the folder is created before anything goes in")
        XCTAssertLessThan(ops.firstIndex(of: "create_folder sub")!, ops.firstIndex(of: "upload n")!)
    }

    func testNewNodeUnderAFolderDeletedHereBringsTheFolderBack() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/a"); f.remove("/d")
        let out = try f.plan([f.remote("/d/new")])
        XCTAssertEqual(out.needSubtrees, [PlanFixture.remoteId("/d")])
        // The puller lists the folder's subtree and plans again with it.
        var g = f
        g.state = f.state
        let again = try g.plan([f.remote("/d/new"), f.remote("/d", folder: true, version: 1), f.remote("/d/a", version: 1)],
                               restoring: [PlanFixture.remoteId("/d")])
        XCTAssertNotNil(g.node("/d/new")); XCTAssertNotNil(g.node("/d/a"))
        XCTAssertTrue(g.state.outbox.isEmpty, "the delete is dropped")
        XCTAssertEqual(again.messages.map(\.kind), [.deleteEdit])
    }

    func testARenameOnTheServerOfSomethingInAFolderDeletedHereGoesWithIt() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/a"); f.remove("/d")
        let out = try f.plan([f.remote("/d/b", id: PlanFixture.remoteId("/d/a"), recordSeq: 2)])
        XCTAssertTrue(out.needSubtrees.isEmpty)
        XCTAssertEqual(f.ops, ["delete d"])
    }

    func testAMoveOutOfAFolderDeletedHereIsDeletedWhereItWent() throws {
        var f = PlanFixture()
        f.synced("/d", folder: true); f.synced("/d/a"); f.remove("/d")
        try f.plan([f.remote("/a", id: PlanFixture.remoteId("/d/a"), recordSeq: 2)])
        XCTAssertNil(f.node("/a"))
        XCTAssertEqual(f.ops, ["delete d", "delete a"])
    }

    // MARK: - Name collisions

    func testARemoteNodeTakesTheNameOfANewLocalOne() throws {
        var f = PlanFixture()
        f.newFile("/x.txt", blob: "n1")
        let out = try f.plan([f.remote("/x.txt")])
        XCTAssertEqual(f.node("/x.txt")?.remoteId, PlanFixture.remoteId("/x.txt"))
        XCTAssertEqual(f.node("/" + copyName)?.localPath, "n1")
        XCTAssertEqual(f.ops, ["upload " + copyName], "its pending upload follows the new name")
        XCTAssertEqual(out.messages.map(\.kind), [.nameCollision])
    }

    func testARemoteNodeTakesTheNameALocalMovePut() throws {
        var f = PlanFixture()
        f.synced("/y.txt"); f.move("/y.txt", to: "/x.txt")
        try f.plan([f.remote("/x.txt")])
        XCTAssertEqual(f.node("/x.txt")?.remoteId, PlanFixture.remoteId("/x.txt"))
        XCTAssertEqual(f.node("/" + copyName)?.remoteId, PlanFixture.remoteId("/y.txt"))
        XCTAssertEqual(f.ops, ["move " + copyName])
    }

    func testTwoRemoteNodesWithOneNameKeepTheLowerId() throws {
        var f = PlanFixture()
        f.synced("/x.txt")   // remote id r_x.txt
        try f.plan([f.remote("/x.txt", id: "r_a")])   // lower id
        XCTAssertEqual(f.node("/x.txt")?.remoteId, "r_a")
        XCTAssertEqual(f.node("/" + copyName)?.remoteId, PlanFixture.remoteId("/x.txt"))
        XCTAssertEqual(f.ops, ["move " + copyName], "renamed on the server by this device")
    }

    func testConflictNamesFitAndAreNumbered() {
        XCTAssertEqual(ConflictName.make("report.pdf", device: "desk/top", date: "2024-05-01"), "report (conflict from desk-top 2024-05-01).pdf")
        XCTAssertEqual(ConflictName.make(".bashrc", device: "d", date: "2024-05-01", number: 2), ".bashrc (conflict from d 2024-05-01 2)")
        XCTAssertLessThanOrEqual(ConflictName.make(String(repeating: "é", count: 127) + ".txt", device: "d", date: "x").utf8.count, 255)
    }
}
