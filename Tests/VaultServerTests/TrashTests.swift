import XCTest

/// What is below a trashed folder is trashed with it (docs/sync.md): the flat listing leaves it
/// out and nothing there changes — no new node, no rename or move, no new content (a device that
/// edits a file in a folder another device deleted gets 409 `parent_trashed`, and its sync
/// re-creates the file instead of hiding the edit in the trash); the trashed folder itself can
/// come back (`trashed: false`).
final class TrashTests: XCTestCase {
    func id(_ c: Character) -> String { String(repeating: c, count: 32) }

    func testBelowATrashedFolderNothingChangesOrIsListed() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "d", "type": "folder", "id": id("a")]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "e", "type": "folder", "id": id("b"), "parentId": id("a")]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "f", "id": id("c"), "parentId": id("b")]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "g", "type": "folder", "id": id("d")]).status, 201)
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(id("a"))", headers: ["If-Match": "1"]).status, 200)

        var listed: [String] = []
        var token: String?
        repeat {
            let r = try u.send("GET", "/v1/files?scope=all&pageSize=1" + (token.map { "&pageToken=\($0)" } ?? ""))
            listed += (r.json["files"] as! [[String: Any]]).map { $0["id"] as! String }
            token = r.json["nextPageToken"] as? String
        } while token != nil
        XCTAssertEqual(listed, [id("d")], "the trashed folder and everything below it are left out")

        // Nothing is created, renamed or given content below the trashed folder.
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "new", "parentId": id("b")]).errorCode, "parent_trashed")
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id("c"))", ["name": "f2", "parentId": id("b")], headers: ["If-Match": "1"]).errorCode,
                       "parent_trashed")
        let rev = try u.json("POST", "/v1/upload?uploadType=resumable", ["size": 1, "sha256": sha256Hex([7]), "requestId": "t1",
                                                                          "fileId": id("c"), "baseVersion": 1])
        XCTAssertEqual(rev.errorCode, "parent_trashed", rev.text)
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id("c"))", ["name": "f", "parentId": id("d")], headers: ["If-Match": "1"]).errorCode,
                       "parent_trashed", "not moved out either")
        // The trashed folder itself comes back, with what it holds.
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id("a"))", ["trashed": false], headers: ["If-Match": "2"]).status, 200)
        XCTAssertEqual((try u.send("GET", "/v1/files?scope=all").json["files"] as! [[String: Any]]).map { $0["id"] as! String }.sorted(),
                       [id("a"), id("b"), id("c"), id("d")])
    }
    /// The server keeps which folders are live between listing pages while the account's change
    /// feed stands still (FolderLiveness): a trash or a restore between two listings (or two pages
    /// of one) is seen by the next page, never the remembered state.
    func testAListingFollowsATrashOrRestoreBetweenItsPages() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "d", "type": "folder", "id": id("a")]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "f", "id": id("b"), "parentId": id("a")]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "g", "id": id("c"), "parentId": id("a")]).status, 201)
        func page(after token: String?) throws -> (ids: [String], next: String?) {
            let r = try u.send("GET", "/v1/files?scope=all&pageSize=2" + (token.map { "&pageToken=\($0)" } ?? ""))
            return ((r.json["files"] as! [[String: Any]]).map { $0["id"] as! String }, r.json["nextPageToken"] as? String)
        }
        let first = try page(after: nil)
        XCTAssertEqual(first.ids, [id("a"), id("b")], "d is live: its file listed")
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(id("a"))", headers: ["If-Match": "1"]).status, 200)
        XCTAssertEqual(try page(after: first.next).ids, [], "trashed between the pages: its other file is left out")
        XCTAssertEqual(try page(after: nil).ids, [], "and a new listing shows nothing of it")
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id("a"))", ["trashed": false], headers: ["If-Match": "2"]).status, 200)
        let again = try page(after: nil)
        XCTAssertEqual(again.ids, [id("a"), id("b")])
        XCTAssertEqual(try page(after: again.next).ids, [id("c")], "restored: listed again")
    }
}
