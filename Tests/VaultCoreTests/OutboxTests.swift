import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys

/// Outbox compaction (docs/outbox.md rules E3, R1–R7), completion and the two-step publish, the
/// transfer history bound and the sync-health warning, on a real vault without a server.
final class OutboxTests: VaultTestCase {
    /// What the outbox holds, as `op name` strings in order.
    func entries() throws -> [String] {
        try vault.outbox().map { "\($0.op.rawValue) \($0.payload.name ?? "")" }
    }

    func tombstones() throws -> Int { try vault.db.scalar("SELECT count(*) FROM outbox_tombstones")?.int ?? -1 }

    /// Records `path` (and nothing under it) as on the server, as a replayed creation would.
    func onServer(_ path: String) throws {
        let n = try vault.resolve(path)
        try vault.db.run("DELETE FROM outbox WHERE node_id = ?", [CompactColumns.key(n.id)])
        try vault.recordRemote(nodeId: n.id, remoteId: "r-" + n.id, version: 1)
        try vault.db.run("UPDATE nodes SET pending_op = NULL WHERE id = ?", [CompactColumns.key(n.id)])
        if !n.isFolder { try vault.markUploaded(nodeId: n.id, remoteId: "r-" + n.id, version: 1) }
    }

    func testRemovingATreeThatNeverReachedTheServerLeavesNothing() throws {
        try vault.mkdir("/a/b", parents: true)
        try vault.put(localFile: try file("x", size: 10), to: "/a/b/x")
        try vault.put(localFile: try file("y", size: 10), to: "/a/y")
        try vault.move("/a/y", to: "/a/b/z")
        try vault.remove("/a", recursive: true)
        XCTAssertEqual(try entries(), [])
        XCTAssertEqual(try tombstones(), 0)
    }

    /// Issue 9 item 7b, second sequence: a synced file moved into a folder that is then removed
    /// is deleted where it is on the server; the new folder needs nothing.
    func testAFileMovedIntoARemovedFolderIsDeletedInsteadOfMoved() throws {
        try vault.put(localFile: try file("e", size: 10), to: "/e.dat")
        try onServer("/e.dat")
        try vault.mkdir("/C")
        try vault.move("/e.dat", to: "/C/e.dat")
        try vault.remove("/C", recursive: true)
        XCTAssertEqual(try entries(), ["delete e.dat"])
        let e = try XCTUnwrap(try vault.outbox().first)
        XCTAssertEqual(e.payload.replacesMove, true)
        XCTAssertNotNil(e.payload.remoteId)
    }

    /// Issue 9 item 7b, first sequence: a folder moved out of a new folder that is then removed
    /// keeps that folder's creation (it is made in it), and the folder is deleted after.
    func testAChildMovedOutOfARemovedNewFolderKeepsTheFolderItWasMadeIn() throws {
        try vault.mkdir("/C")
        try vault.mkdir("/C/A")
        try vault.move("/C/A", to: "/A")
        try vault.remove("/C", recursive: true)
        XCTAssertEqual(try entries(), ["create_folder C", "create_folder A", "move A", "delete C"])
        let c = try XCTUnwrap(try vault.outbox().first?.nodeId)
        XCTAssertEqual(try vault.outboxTarget(nodeId: c)?.isRemoved, true, "tombstoned: the replay still needs its server id")
    }

    /// A synced folder moved out of before its parent's removal: the move replays first.
    func testAMoveOutOfASyncedFolderReplaysBeforeItsDelete() throws {
        try vault.mkdir("/C")
        try vault.put(localFile: try file("x", size: 10), to: "/C/x")
        try onServer("/C"); try onServer("/C/x")
        try vault.move("/C/x", to: "/x")
        try vault.remove("/C", recursive: true)
        XCTAssertEqual(try entries(), ["move x", "delete C"])
    }

    /// Rule E3/E4: newer content joins an upload that has not started; a started one is kept.
    func testNewContentJoinsAPendingUploadUnlessItsSessionStarted() throws {
        try vault.put(localFile: try file("v1", size: 10), to: "/f")
        let first = try XCTUnwrap(try vault.outbox().first)
        let n = try vault.put(localFile: try file("v2", size: 20, seed: 2), to: "/f", replace: true)
        let merged = try vault.outbox()
        XCTAssertEqual(merged.count, 1)
        XCTAssertEqual(merged[0].payload.blobId, n.localPath)
        XCTAssertEqual(merged[0].payload.size, 20)
        XCTAssertNotEqual(merged[0].requestId, first.requestId, "a new idempotency key for new content")
        let t = try vault.addTransfer(.upload, nodeId: n.id, state: .running, blobId: n.localPath, total: 20, requestId: merged[0].requestId)
        try vault.updateTransfer(t, .session(uploadId: "u1", url: nil))
        try vault.put(localFile: try file("v3", size: 30, seed: 3), to: "/f", replace: true)
        XCTAssertEqual(try entries(), ["upload f", "upload f"])
    }

    /// Rule R1: a removed file whose upload session is open frees it on the server
    /// (`discard_upload`); its transfer rows go (R7).
    func testRemovingAFileWithAnOpenUploadSessionDiscardsIt() throws {
        let n = try vault.put(localFile: try file("f", size: 10), to: "/f")
        let e = try XCTUnwrap(try vault.outbox().first)
        let t = try vault.addTransfer(.upload, nodeId: n.id, state: .running, blobId: n.localPath, total: 10, requestId: e.requestId)
        try vault.updateTransfer(t, .session(uploadId: "u1", url: nil))
        try vault.remove("/f")
        let left = try vault.outbox()
        XCTAssertEqual(left.map(\.op), [.discardUpload])
        XCTAssertEqual(left[0].payload.uploadId, "u1")
        XCTAssertEqual(try vault.db.scalar("SELECT count(*) FROM transfers")?.int, 0)
    }

    /// Completion records the server's id in the same transaction that removes the entry, and
    /// publishes the staged blob: its row first, its file after the commit.
    func testCompletingAnUploadPublishesTheBlob() throws {
        let n = try vault.put(localFile: try file("f", size: 100), to: "/f")
        let blob = try XCTUnwrap(n.localPath)
        let e = try XCTUnwrap(try vault.outbox().first)
        try vault.completeOutboxEntry(e, .uploaded(remoteId: "r1", version: 3, blobId: blob))
        let after = try XCTUnwrap(try vault.node(id: n.id))
        XCTAssertEqual(after.remoteId, "r1"); XCTAssertEqual(after.version, 3); XCTAssertNil(after.pendingOp)
        XCTAssertEqual(try vault.recordedArea(ofBlob: blob), .cache)
        XCTAssertTrue(FileManager.default.fileExists(atPath: vault.blobs.path(id: blob, area: .cache)))
        XCTAssertEqual(try entries(), [])
    }

    /// A publish interrupted between its commit and its move (and the older opposite state):
    /// the content reads from either area, and the repair moves the file where its row says.
    func testBlobsAreFoundInEitherAreaAndRepaired() throws {
        let n = try vault.put(localFile: try file("f", size: 100), to: "/f")
        let blob = try XCTUnwrap(n.localPath)
        try vault.db.run("UPDATE blobs SET area = ? WHERE id = ?", [BlobArea.cache, CompactColumns.key(blob)])   // committed, not moved
        XCTAssertEqual(try vault.openContent(n).plaintextSize, 100)
        XCTAssertEqual(try vault.repairBlobAreas().count, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: vault.blobs.path(id: blob, area: .cache)))
        try vault.db.run("UPDATE blobs SET area = ? WHERE id = ?", [BlobArea.staging, CompactColumns.key(blob)])  // moved, then rolled back
        XCTAssertEqual(try vault.openContent(n).plaintextSize, 100)
        XCTAssertTrue(try vault.doctor().repaired.contains { $0.contains("back to staging/") })
        XCTAssertTrue(FileManager.default.fileExists(atPath: vault.blobs.path(id: blob, area: .staging)))
        XCTAssertTrue(try vault.doctor().healthy)
    }

    /// `vault transfers` keeps the newest 200 finished rows of the last 7 days, and no row of a
    /// removed file.
    func testTransferHistoryIsBoundedAndForgetsRemovedFiles() throws {
        let n = try vault.put(localFile: try file("f", size: 10), to: "/f")
        for _ in 0..<(Vault.transferHistoryCount + 50) {
            let t = try vault.addTransfer(.download, nodeId: "gone-" + UUID().uuidString, state: .running, total: 1)
            try vault.updateTransfer(t, .state(.done))
        }
        try vault.db.run("UPDATE transfers SET node_id = ?", [CompactColumns.key(n.id)])
        let old = try vault.addTransfer(.upload, nodeId: n.id, state: .done, total: 1, requestId: "x")
        try vault.db.run("UPDATE transfers SET updated_at = ? WHERE id = ?", [Vault.now - Vault.transferHistoryAge - 10, old])
        let running = try vault.addTransfer(.upload, nodeId: n.id, state: .running, total: 1, requestId: "y")
        try vault.pruneTransfers()
        let rows = try vault.transfers()
        XCTAssertEqual(rows.filter { $0.state == .done }.count, Vault.transferHistoryCount - 1, "the 200 newest, minus the old one")
        XCTAssertFalse(rows.contains { $0.id == old })
        XCTAssertTrue(rows.contains { $0.id == running }, "unfinished rows stay")
        XCTAssertEqual(try vault.unfinishedTransfers().map(\.id), [running])
        try vault.remove("/f")
        XCTAssertEqual(try vault.transfers().count, 0)
        XCTAssertEqual(try vault.db.scalar("SELECT count(*) FROM transfers")?.int, 0)
    }

    func testSyncHealthWarnings() throws {
        let now: Int64 = 1_000_000
        XCTAssertNil(SyncHealth(lastSuccessAt: now - 60).warning(now: now, unsynced: 3))
        XCTAssertEqual(SyncHealth(lastSuccessAt: now - 3 * 86400).warning(now: now, unsynced: 0), "no sync has finished for 72 hours",
                       "sync is two-way: another device's changes may wait even when nothing waits here")
        XCTAssertNotNil(SyncHealth(lastSuccessAt: now - 3 * 86400).warning(now: now, unsynced: 1))
        XCTAssertNil(SyncHealth(lastSuccessAt: now - 60, lastFailureAt: now - 30, lastFailure: "x", failuresInRow: 2).warning(now: now, unsynced: 0))
        let three = SyncHealth(lastSuccessAt: now - 60, lastFailureAt: now - 30, lastFailure: "cannot reach", failuresInRow: 3)
        XCTAssertEqual(three.warning(now: now, unsynced: 0), "the last 3 syncs failed: cannot reach")
        XCTAssertNotNil(SyncHealth(lastFailureAt: now - 2 * 86400, lastFailure: "x", failuresInRow: 1).warning(now: now, unsynced: 0))
        // Recorded and read back.
        try vault.recordSyncFailure("down"); try vault.recordSyncFailure("down"); try vault.recordSyncFailure("still down")
        XCTAssertEqual(try vault.syncHealth().failuresInRow, 3)
        XCTAssertEqual(try vault.syncHealth().lastFailure, "still down")
        try vault.recordSyncSuccess()
        XCTAssertEqual(try vault.syncHealth().failuresInRow, 0)
        XCTAssertNil(try vault.syncHealth().warning(now: Vault.now, unsynced: 5))
    }
}
