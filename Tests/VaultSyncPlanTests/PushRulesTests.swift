import VaultSyncPlan
import XCTest

/// The push decisions for deletes (docs/sync.md "Pushing"): a folder's delete names the cursor of
/// the last pull applied, a file's does not; a refusal as `subtree_changed` is a conflict for the
/// next pull to settle; a delete sent again after a replaced move keeps its cursor.
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
}
