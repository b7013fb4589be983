import Foundation
import XCTest

/// A folder delete names the feed cursor it was decided on (docs/sync.md "Pushing"): the server
/// refuses it (412 `subtree_changed`) when another device put something in the folder after this
/// device's last pull, and this device's next sync brings the folder back with it (new folder
/// content wins over the folder's delete).
extension TwoWaySyncTests {
    func testAFolderDeleteDecidedBeforeAnotherDevicesUploadIsRefusedAndTheFolderComesBack() throws {
        try a.ok(["mkdir", "/F"] + a.pw)
        try put(a, "/F/a.txt", "kept")
        try sync(a)
        try sync(b)
        // B puts a file in /F after A's last pull.
        try put(b, "/F/new.txt", "from b")
        try sync(b)
        // A removes /F and pushes without pulling first (`vault transfers resume` is a push): its
        // delete names A's cursor, from before B's upload.
        try a.ok(["rm", "-r", "/F"] + a.pw)
        let push = try a.run(["transfers", "resume"] + a.pw)
        XCTAssertEqual(push.status, 0, push.stderr)
        XCTAssertTrue(push.out.contains("1 conflict(s)"), push.out + push.stderr)
        XCTAssertTrue(push.stderr.contains("something in it changed on the server since"), push.stderr)
        XCTAssertEqual(try serverNodes().count, 3, "nothing trashed on the server: /F, a.txt, new.txt")

        // A's next sync pulls B's file: the new content in the folder wins over the delete.
        try sync(a)
        let conflicts = try XCTUnwrap(try a.ok(["conflicts", "--json"] + a.pw).json as? [[String: Any]])
        XCTAssertTrue(conflicts.contains { $0["kind"] as? String == "delete-vs-edit" }, "\(conflicts)")
        XCTAssertEqual(try cat(a, "/F/new.txt"), "from b")
        XCTAssertEqual(try cat(a, "/F/a.txt"), "kept")
        try sync(b)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertEqual(try cat(b, "/F/new.txt"), "from b")
        XCTAssertEqual(try serverNodes().count, 3)
        let status = try XCTUnwrap(try a.ok(["status", "--json"] + a.pw).json as? [String: Any])
        XCTAssertEqual((status["changes"] as? [String: Any])?["conflict"] as? Int, 0, "nothing waits on A: \(status)")
        XCTAssertEqual(status["pendingChanges"] as? Int, 0)
    }
}
