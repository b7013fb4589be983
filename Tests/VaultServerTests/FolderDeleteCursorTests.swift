import XCTest

/// A folder delete that names the change-feed cursor it was decided on (`X-Vault-Decided-At`,
/// docs/server.md "Folder deletes"): refused with 412 `subtree_changed` when a change after that
/// cursor touched a node that is below the folder now — so a delete delayed in the network never
/// trashes what another device put there after the deciding device's pull. `If-Match` covers the
/// folder only; without the header a delete is as before.
final class FolderDeleteCursorTests: XCTestCase {
    func cursor(_ u: APIUser) throws -> Int { try XCTUnwrap(u.send("GET", "/v1/changes/start").json["cursor"] as? Int) }

    func delete(_ u: APIUser, _ id: String, version: Int = 1, at cursor: Int?) throws -> TestResponse {
        var h = ["If-Match": "\"\(version)\""]
        if let cursor { h["X-Vault-Decided-At"] = String(cursor) }
        return try u.send("DELETE", "/v1/files/\(id)", headers: h)
    }

    func trashed(_ u: APIUser, _ id: String) throws -> Bool { try XCTUnwrap(u.send("GET", "/v1/files/\(id)").json["trashed"] as? Bool) }

    /// Each change below the folder after the cursor refuses the delete, at any depth; the folder
    /// stays as it was; a delete on a cursor after the change goes through.
    func testAChangeBelowTheFolderAfterTheCursorRefusesItsDelete() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let elsewhere = try u.upload("loose.txt", [1])["id"] as! String
        let changes: [(String, (String, String) throws -> Void)] = [
            ("created below", { _, sub in _ = try u.upload("new.txt", [2], parent: sub) }),
            ("moved in", { _, sub in
                XCTAssertEqual(try u.json("PATCH", "/v1/files/\(elsewhere)", ["parentId": sub],
                                          headers: ["If-Match": "\(try u.send("GET", "/v1/files/\(elsewhere)").json["version"] as! Int)"]).status, 200)
            }),
            ("new content", { top, _ in
                let f = try XCTUnwrap(u.send("GET", "/v1/files?parentId=\(top)").json["files"] as? [[String: Any]]).first { $0["type"] as? String == "file" }!
                XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&fileId=\(f["id"] as! String)",
                                          headers: ["If-Match": "1"], body: [9, 9]).status, 201)
            }),
            ("renamed below", { _, sub in XCTAssertEqual(try u.json("PATCH", "/v1/files/\(sub)", ["name": "renamed"], headers: ["If-Match": "1"]).status, 200) }),
        ]
        for (i, (what, change)) in changes.enumerated() {
            let top = try u.mkdir("F\(i)")["id"] as! String
            let sub = try u.mkdir("sub", parent: top)["id"] as! String
            _ = try u.upload("kept.txt", [3], parent: top)
            let decided = try cursor(u)
            try change(top, sub)
            let r = try delete(u, top, at: decided)
            XCTAssertEqual(r.status, 412, "\(what): \(r.text)")
            XCTAssertEqual(r.errorCode, "subtree_changed", what)
            XCTAssertFalse(try trashed(u, top), "\(what): the folder is not trashed")
            XCTAssertEqual(try u.send("GET", "/v1/files/\(top)").json["version"] as? Int, 1, "\(what): nor changed")
            XCTAssertEqual(try delete(u, top, at: try cursor(u)).status, 200, "\(what): decided again after the change, it goes")
            XCTAssertTrue(try trashed(u, top))
        }
    }

    /// A node restored from the trash into the folder after the cursor is new there too.
    func testANodeRestoredBelowAfterTheCursorRefuses() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let top = try u.mkdir("F")["id"] as! String
        let file = try u.upload("f.txt", [1], parent: top)["id"] as! String
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(file)", headers: ["If-Match": "1"]).status, 200)
        let decided = try cursor(u)
        XCTAssertEqual(try delete(u, top, at: decided).status, 200, "nothing changed below it since")
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(top)", ["trashed": false], headers: ["If-Match": "2"]).status, 200)
        let decidedAgain = try cursor(u)
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(file)", ["trashed": false], headers: ["If-Match": "2"]).status, 200)
        let r = try delete(u, top, version: 3, at: decidedAgain)
        XCTAssertEqual(r.errorCode, "subtree_changed", r.text)
        XCTAssertFalse(try trashed(u, top))
    }

    /// Changes that leave nothing new below the folder do not refuse it: a node moved out, a node
    /// trashed, a node changed in a subfolder trashed since, a change elsewhere, the folder's own
    /// rename (its `If-Match` covers that).
    func testChangesThatLeaveNothingNewBelowDoNotRefuse() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let top = try u.mkdir("F")["id"] as! String
        let out = try u.upload("out.txt", [1], parent: top)["id"] as! String
        let gone = try u.upload("gone.txt", [2], parent: top)["id"] as! String
        let sub = try u.mkdir("sub", parent: top)["id"] as! String
        let deep = try u.upload("deep.txt", [3], parent: sub)["id"] as! String
        let decided = try cursor(u)
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(out)", ["parentId": "root"], headers: ["If-Match": "1"]).status, 200)
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(gone)", headers: ["If-Match": "1"]).status, 200)
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&fileId=\(deep)", headers: ["If-Match": "1"], body: [4]).status, 201)
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(sub)", headers: ["If-Match": "1"]).status, 200)
        _ = try u.mkdir("elsewhere")
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(top)", ["name": "F2"], headers: ["If-Match": "1"]).status, 200)
        XCTAssertEqual(try delete(u, top, version: 2, at: decided).status, 200)
        XCTAssertTrue(try trashed(u, top))
    }

    /// A change below a folder after the cursor, then the folder's delete without the header: as
    /// before (trashed); the trash operation `PATCH trashed:true` checks the header as DELETE
    /// does; a file has nothing below it (no check); an already trashed folder stays a no-op.
    func testWithoutTheHeaderAsBeforeAndThePatchTrashChecksIt() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let a = try u.mkdir("A")["id"] as! String
        let b = try u.mkdir("B")["id"] as! String
        let file = try u.upload("f.txt", [1])["id"] as! String
        let decided = try cursor(u)
        _ = try u.upload("x", [1], parent: a)
        _ = try u.upload("y", [1], parent: b)

        let patch = try u.json("PATCH", "/v1/files/\(b)", ["trashed": true], headers: ["If-Match": "1", "X-Vault-Decided-At": String(decided)])
        XCTAssertEqual(patch.status, 412, patch.text)
        XCTAssertEqual(patch.errorCode, "subtree_changed")
        XCTAssertFalse(try trashed(u, b))
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(b)", ["name": "B2"], headers: ["If-Match": "1", "X-Vault-Decided-At": String(decided)]).status,
                       200, "a PATCH that does not trash does not check")

        XCTAssertEqual(try delete(u, file, at: decided).status, 200, "a file: no check")
        XCTAssertEqual(try delete(u, a, at: nil).status, 200, "no header: trashed as before")
        XCTAssertEqual(try delete(u, a, version: 2, at: decided).status, 200, "already trashed: a no-op")
    }

    /// A malformed header is 400 `invalid_cursor` (nothing changes); a cursor older than the
    /// retained history (what changed cannot be told) is refused as changed.
    func testMalformedOrExpiredCursor() throws {
        let s = try ServerProcess(args: ["--changes-keep", "3"])
        let u = try APIUser(s, "alice")
        let f = try u.mkdir("F")["id"] as! String
        let decided = try cursor(u)
        for bad in ["abc", "-1", "+5", "1e3", "5 5", "1234567890123456789"] {
            let r = try u.send("DELETE", "/v1/files/\(f)", headers: ["If-Match": "1", "X-Vault-Decided-At": bad])
            XCTAssertEqual(r.status, 400, "'\(bad)': \(r.text)")
            XCTAssertEqual(r.errorCode, "invalid_cursor", bad)
        }
        XCTAssertFalse(try trashed(u, f))
        for i in 0..<5 { _ = try u.mkdir("d\(i)") }
        XCTAssertEqual(try u.send("GET", "/v1/changes?cursor=\(decided)").status, 410)
        let r = try delete(u, f, at: decided)
        XCTAssertEqual(r.status, 412, r.text)
        XCTAssertEqual(r.errorCode, "subtree_changed")
        XCTAssertFalse(try trashed(u, f))
        XCTAssertEqual(try delete(u, f, at: try cursor(u)).status, 200)
    }
}
