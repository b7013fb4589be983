import VaultSyncPlan
import XCTest

/// The push decisions (docs/sync.md "Pushing"), which `vault sync` and the simulation both run: a
/// folder's delete names the cursor of the last pull applied, a file's does not; a refusal as
/// `subtree_changed` is a conflict for the next pull to settle; a delete sent again after a
/// replaced move keeps its cursor; an answer showing an earlier attempt applied records no newer
/// version than the entry was based on.
final class PushRulesTests: XCTestCase {
    func rules(_ target: OutboxTarget, cursor: Int64?) -> PushRules {
        PushRules(target: target, remoteFolderId: { $0 == nil || $0 == Node.rootId ? Node.rootId : "r-" + $0! }, waiting: PushWaiting(),
                  holdFolderDeletes: false, deviceId: "dev-me", newId: { "new" }, subtreeHoldsLocal: { _ in false }, label: "/F",
                  cursor: cursor)
    }

    func tombstone(_ isFolder: Bool) -> OutboxTarget {
        OutboxTarget(nodeId: "n1", node: nil, remoteId: "r1", version: 4, isFolder: isFolder)
    }

    func delete(replacesMove: Bool = false) -> OutboxEntry {
        OutboxEntry(seq: 1, op: .delete, nodeId: "n1", payload: OutboxPayload(name: "F", parentId: "p", remoteId: "r1", replacesMove: replacesMove),
                    baseVersion: 4, requestId: "q1")
    }

    func testAFolderDeleteNamesTheLastPullsCursorAFileDeleteDoesNot() throws {
        XCTAssertEqual(try rules(tombstone(true), cursor: 17).decide(delete()), .send(.delete(fileId: "r1", baseVersion: 4, decidedAt: 17)))
        XCTAssertEqual(try rules(tombstone(false), cursor: 17).decide(delete()), .send(.delete(fileId: "r1", baseVersion: 4, decidedAt: nil)))
        XCTAssertEqual(try rules(tombstone(true), cursor: nil).decide(delete()), .send(.delete(fileId: "r1", baseVersion: 4, decidedAt: nil)),
                       "before any pull: no cursor to name (as before)")
    }

    func testSubtreeChangedIsAConflictForTheNextPull() throws {
        let r = rules(tombstone(true), cursor: 17)
        let step = try r.interpret(.subtreeChanged, to: .delete(fileId: "r1", baseVersion: 4, decidedAt: 17), for: delete())
        guard case .conflict(let why) = step else { return XCTFail("\(step)") }
        XCTAssertTrue(why.contains("changed on the server since this device's last pull"), why)
    }

    func testADeleteSentAgainAfterItsReplacedMoveKeepsItsCursor() throws {
        let r = rules(tombstone(true), cursor: 17)
        let moved = RemoteNode(id: "r1", parentId: "r-p", name: "F", isFolder: true, version: 5, trashed: false,
                               record: NodeRecord(device: "dev-me", mtime: 0, name: "F", parent: "r-p", seq: 2, isFolder: true),
                               content: nil, storedSize: 0)
        let step = try r.interpret(.stale(moved), to: .delete(fileId: "r1", baseVersion: 4, decidedAt: 17), for: delete(replacesMove: true))
        XCTAssertEqual(step, .send(.delete(fileId: "r1", baseVersion: 5, decidedAt: 17)))
    }

    // MARK: An earlier attempt's answer (its own answer lost)

    func node(_ id: String, in parent: String, named name: String, folder: Bool = false, version: Int64, by device: String,
              content: ContentRecord? = nil) -> RemoteNode {
        RemoteNode(id: id, parentId: parent, name: name, isFolder: folder, version: version, trashed: false,
                   record: NodeRecord(device: device, mtime: 0, name: name, parent: parent, seq: version, isFolder: folder),
                   content: content, storedSize: 0)
    }

    func content(_ blob: String, by device: String, seq: Int64) -> ContentRecord {
        ContentRecord(blob: blob, device: device, mime: "text/plain", mtime: 0, sealedSize: 40, seq: seq, sha256: "sha-" + blob, size: 1)
    }

    func entry(_ op: OutboxOp, _ payload: OutboxPayload) -> OutboxEntry {
        OutboxEntry(seq: 1, op: op, nodeId: "n1", payload: payload, baseVersion: 4, requestId: "q1")
    }

    /// Case 1: `id_taken` is this device's creation, wherever another device moved it since and
    /// whatever it wrote: version 0 is recorded (a creation's base), never the server's version, so
    /// the next pull brings what others did (a version at or below the recorded one is skipped).
    func testIdTakenRecordsVersionZeroWhateverOthersDidSince() throws {
        let r = rules(OutboxTarget(nodeId: "n1", node: nil, remoteId: nil, version: 0, isFolder: true), cursor: nil)
        let renamed = node("c1", in: "r-x", named: "Renamed", folder: true, version: 3, by: "dev-other")
        let folder = try r.interpret(.idTaken(renamed), to: .createFolder(id: "c1", parent: "root", name: "D"),
                                     for: entry(.createFolder, OutboxPayload(name: "D", clientId: "c1")))
        XCTAssertEqual(folder, .done(.onServer(remoteId: "c1", version: 0), base: nil, message: "created folder /F"))
        let edited = node("c2", in: "root", named: "f", version: 2, by: "dev-me", content: content("theirs", by: "dev-other", seq: 2))
        let file = try r.interpret(.idTaken(edited), to: .createFile(id: "c2", parent: "root", name: "f", blobId: "mine"),
                                   for: entry(.upload, OutboxPayload(name: "f", blobId: "mine", clientId: "c2")))
        XCTAssertEqual(file, .done(.uploaded(remoteId: "c2", version: 0, blobId: "mine"), base: nil, message: "uploaded /F"))
        // A node of the other type under the id chosen is not this entry's.
        let wrongType = try r.interpret(.idTaken(edited), to: .createFolder(id: "c2", parent: "root", name: "D"),
                                        for: entry(.createFolder, OutboxPayload(name: "D", clientId: "c2")))
        guard case .failed = wrongType else { return XCTFail("\(wrongType)") }
        XCTAssertEqual(try r.interpret(.idTaken(nil), to: .createFolder(id: "c1", parent: "root", name: "D"),
                                       for: entry(.createFolder, OutboxPayload(name: "D", clientId: "c1"))),
                       .failed("the server holds another node with the id chosen for /F"))
    }

    /// An upload session an earlier attempt completed answers with the node as it is now: a
    /// version past the one this upload made records the version it was based on, and no base.
    func testAnUploadFoundCompleteAtALaterVersionRecordsItsBaseVersion() throws {
        let r = rules(OutboxTarget(nodeId: "n1", node: nil, remoteId: "r1", version: 4, isFolder: false), cursor: nil)
        let e = entry(.upload, OutboxPayload(name: "f", remoteId: "r1", blobId: "mine"))
        let fresh = node("r1", in: "root", named: "f", version: 5, by: "dev-me", content: content("mine", by: "dev-me", seq: 3))
        XCTAssertEqual(try r.interpret(.ok(fresh), to: .newRevision(fileId: "r1", baseVersion: 4, blobId: "mine"), for: e),
                       .done(.uploaded(remoteId: "r1", version: 5, blobId: "mine"), base: RemoteBase(fresh), message: "uploaded /F"))
        let later = node("r1", in: "root", named: "g", version: 6, by: "dev-other", content: content("mine", by: "dev-me", seq: 3))
        XCTAssertEqual(try r.interpret(.ok(later), to: .newRevision(fileId: "r1", baseVersion: 4, blobId: "mine"), for: e),
                       .done(.uploaded(remoteId: "r1", version: 4, blobId: "mine"), base: nil, message: "uploaded /F"))
        let created = node("c2", in: "root", named: "g", version: 2, by: "dev-other", content: content("mine", by: "dev-me", seq: 1))
        XCTAssertEqual(try r.interpret(.ok(created), to: .createFile(id: "c2", parent: "root", name: "f", blobId: "mine"), for: e),
                       .done(.uploaded(remoteId: "c2", version: 0, blobId: "mine"), base: nil, message: "uploaded /F"))
    }

    /// Case 2: a move answered 412 with the node already at its destination was applied by an
    /// earlier attempt: the version it was based on is recorded, not the server's (which may hold
    /// another device's later edit, which the next pull must bring).
    func testAMoveFoundAppliedRecordsItsBaseVersionNotTheServers() throws {
        let r = rules(OutboxTarget(nodeId: "n1", node: nil, remoteId: "r1", version: 4, isFolder: false), cursor: nil)
        let e = entry(.move, OutboxPayload(name: "g", parentId: "p", remoteId: "r1"))
        let request = PushRequest.move(fileId: "r1", baseVersion: 4, parent: "r-p", name: "g")
        let editedSince = node("r1", in: "r-p", named: "g", version: 6, by: "dev-me", content: content("theirs", by: "dev-other", seq: 3))
        XCTAssertEqual(try r.interpret(.stale(editedSince), to: request, for: e),
                       .done(.onServer(remoteId: "r1", version: 4), base: nil, message: "moved /F"))
        guard case .conflict = try r.interpret(.stale(node("r1", in: "r-q", named: "g", version: 5, by: "dev-other")), to: request, for: e)
        else { return XCTFail("moved elsewhere by another device: a conflict") }
        // Names compare byte for byte: "é" precomposed is not "e" and a combining accent.
        guard case .conflict = try r.interpret(.stale(node("r1", in: "r-p", named: "caf\u{E9}", version: 5, by: "dev-me")),
                                               to: .move(fileId: "r1", baseVersion: 4, parent: "r-p", name: "cafe\u{301}"), for: e)
        else { return XCTFail("another name") }
        // A reseal goes where the node already is: applied only when this device's record is one version on.
        let reseal = entry(.move, OutboxPayload(name: "g", parentId: "p", remoteId: "r1", reseal: true))
        XCTAssertEqual(try r.interpret(.stale(node("r1", in: "r-p", named: "g", version: 5, by: "dev-me")), to: request, for: reseal),
                       .done(.onServer(remoteId: "r1", version: 4), base: nil, message: "resealed /F"))
        guard case .conflict = try r.interpret(.stale(node("r1", in: "r-p", named: "g", version: 5, by: "dev-other")), to: request, for: reseal)
        else { return XCTFail("not resealed: sent again after the pull") }
    }

    /// Case 3: a delete that replaced a move retries against the moved version only when that
    /// move is all that happened since (one version more, this device's record). Another device's
    /// edit since is a conflict (new content wins over a delete): never deleted unseen.
    func testADeleteThatReplacedAMoveIsNotRetriedOverAnotherDevicesChange() throws {
        let r = rules(tombstone(false), cursor: 17)
        let request = PushRequest.delete(fileId: "r1", baseVersion: 4, decidedAt: nil)
        let movedThenEdited = node("r1", in: "r-p", named: "F", version: 6, by: "dev-me", content: content("theirs", by: "dev-other", seq: 3))
        guard case .conflict = try r.interpret(.stale(movedThenEdited), to: request, for: delete(replacesMove: true))
        else { return XCTFail("edited since the move: a conflict") }
        let movedByOther = node("r1", in: "r-p", named: "F", version: 5, by: "dev-other")
        guard case .conflict = try r.interpret(.stale(movedByOther), to: request, for: delete(replacesMove: true))
        else { return XCTFail("moved there by another device: a conflict") }
        XCTAssertEqual(try r.interpret(.stale(node("r1", in: "r-p", named: "F", version: 5, by: "dev-me")), to: request,
                                       for: delete(replacesMove: true)),
                       .send(.delete(fileId: "r1", baseVersion: 5, decidedAt: nil)))
        guard case .conflict = try r.interpret(.stale(node("r1", in: "r-p", named: "F", version: 5, by: "dev-me")), to: request,
                                               for: delete(replacesMove: false))
        else { return XCTFail("a plain delete is never sent again over a newer version") }
    }
}
