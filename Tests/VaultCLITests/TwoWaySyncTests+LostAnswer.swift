import Foundation
import XCTest

/// A change the server applied whose answer this device never recorded (`kill -9` between the
/// two, the crash point `replay-before-complete`), while another device changed the node after
/// it. The next sync recognises its own change (docs/sync.md "Pushing") and records no newer
/// version than the change was based on: the other device's change still reaches it, and a
/// delete never removes what it has not seen.
extension TwoWaySyncTests {
    /// One `vault sync` killed after the server applied the first change it pushed.
    func syncKilledBeforeRecording(_ h: CLIHarness, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try h.run(["sync"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "replay-before-complete"])
        XCTAssertEqual(r.status, 9, "killed at the crash point: \(r.stderr)", file: file, line: line)
    }

    /// /f.txt on both devices; A moves it to /g.txt and is killed after the server applied the
    /// move, before recording it; then `onA` runs on A, and B edits /g.txt and syncs.
    func moveUnrecordedThenEditOnB(_ onA: () throws -> Void = {}) throws {
        try put(a, "/f.txt", "v1")
        try sync(a)
        try sync(b)
        try a.ok(["mv", "/f.txt", "/g.txt"] + a.pw)
        try syncKilledBeforeRecording(a)
        try onA()
        try sync(b)
        try put(b, "/g.txt", "from b", replace: true)
        try sync(b)
    }

    /// Case 1 (`id_taken`, or an upload session found complete): a folder and a file this device
    /// created, renamed by another device before this one recorded them, are adopted (version 0)
    /// and the renames reach it.
    func testACreationWhoseAnswerWasLostFollowsAnotherDevicesRename() throws {
        try a.ok(["mkdir", "/D"] + a.pw)
        try put(a, "/f.txt", "sent after")
        try syncKilledBeforeRecording(a)   // /D made on the server, not recorded; /f.txt not sent
        try sync(b)
        try b.ok(["mv", "/D", "/E"] + b.pw)
        try sync(b)
        var r = try sync(a)
        XCTAssertFalse(r.stderr.contains("failed"), r.stderr)
        XCTAssertEqual(Set(try tree(a).keys), ["/E", "/f.txt"])

        try put(a, "/h.txt", "made on a")
        try syncKilledBeforeRecording(a)   // uploaded, not recorded
        try sync(b)
        try b.ok(["mv", "/h.txt", "/E/k.txt"] + b.pw)
        try sync(b)
        r = try sync(a)
        XCTAssertFalse(r.stderr.contains("failed"), r.stderr)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertEqual(Set(try tree(a).keys), ["/E", "/E/k.txt", "/f.txt"])
        XCTAssertEqual(try cat(a, "/E/k.txt"), "made on a")
    }

    /// Case 2: a move found applied (412, the file already where it goes) after another device
    /// edited the file: that edit reaches this device.
    func testAMoveWhoseAnswerWasLostStillBringsAnotherDevicesLaterEdit() throws {
        try moveUnrecordedThenEditOnB()
        try sync(a)
        XCTAssertEqual(try tree(a), try tree(b), "the edit after the move reached A")
        XCTAssertEqual(try node(a, "/g.txt")?["contentState"] as? String, "STALE")
        try a.ok(["evict", "/g.txt"] + a.pw)
        XCTAssertEqual(try cat(a, "/g.txt"), "from b")
    }

    /// Case 3: a delete that replaced a move (rule R2) whose move the server applied, after which
    /// another device edited the file: the delete is not sent over that edit (new content wins
    /// over a delete); the file comes back on this device with the edit.
    func testADeleteThatReplacedAnAppliedMoveDoesNotRemoveAnotherDevicesLaterEdit() throws {
        try moveUnrecordedThenEditOnB { try a.ok(["rm", "/g.txt"] + a.pw) }
        let r = try a.run(["sync"] + a.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        try sync(b)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertEqual(try cat(a, "/g.txt"), "from b", "B's edit survives A's delete")
        XCTAssertEqual(try cat(b, "/g.txt"), "from b")
        let conflicts = try XCTUnwrap(try a.ok(["conflicts", "--json"] + a.pw).json as? [[String: Any]])
        XCTAssertTrue(conflicts.contains { $0["kind"] as? String == "delete-vs-edit" }, "\(conflicts)")
    }
}

extension TwoWaySyncTests {
    /// A new file whose upload the server completed (answer lost), removed here before the next
    /// sync (its entry becomes `discard_upload`), and edited by another device in between: the
    /// discard deletes only the version the upload made, never the other device's edit (new
    /// content wins over a delete); the file comes back here with that edit.
    func testADiscardedUploadDoesNotRemoveAnotherDevicesLaterEdit() throws {
        try put(a, "/n.txt", "made on a")
        try discardUnrecordedUploadAfterAnEditOnB(edit: "from b", "B's edit survives A's discard")
    }

    /// The same for a new version of a file both devices have: the delete that follows the
    /// discard is sent against the version the upload made, so it finds another device's later
    /// edit (a conflict) and leaves it.
    func testADiscardedNewVersionDoesNotRemoveAnotherDevicesLaterEdit() throws {
        try put(a, "/n.txt", "v1")
        try sync(a)
        try sync(b)
        try put(a, "/n.txt", "v2 from a", replace: true)
        try discardUnrecordedUploadAfterAnEditOnB(edit: "v3 from b", "B's edit survives A's discard and delete")
    }

    /// A's pending upload of /n.txt is sent and not recorded (killed), A removes the file, B
    /// writes `edit` into it; then A syncs: B's edit is what both end up with.
    private func discardUnrecordedUploadAfterAnEditOnB(edit: String, _ message: String,
                                                       file: StaticString = #filePath, line: UInt = #line) throws {
        try syncKilledBeforeRecording(a, file: file, line: line)
        try a.ok(["rm", "/n.txt"] + a.pw)
        try sync(b)
        try put(b, "/n.txt", edit, replace: true)
        try sync(b)
        let r = try a.run(["sync"] + a.pw)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        try sync(b)
        XCTAssertEqual(try tree(a), try tree(b), file: file, line: line)
        XCTAssertEqual(try cat(b, "/n.txt"), edit, message, file: file, line: line)
        XCTAssertEqual(try cat(a, "/n.txt"), edit, file: file, line: line)
    }
}
