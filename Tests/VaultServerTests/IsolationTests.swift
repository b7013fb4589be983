import XCTest

/// One user can never see, read, change or learn of another's files: 404 on every endpoint.
final class IsolationTests: XCTestCase {
    func testOtherUsersIdsAre404Everywhere() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let alice = try APIUser(s, "alice"), bob = try APIUser(s, "bob")
        let folder = try alice.mkdir("private")["id"] as! String
        let file = try alice.upload("secret.txt", Array("alice only".utf8), parent: folder)
        let fid = file["id"] as! String
        let rid = file["headRevisionId"] as! String
        let session = try alice.startSession(name: "s", bytes: randomBytes(1500)).json["uploadId"] as! String
        let bobFile = try bob.upload("mine.txt", Array("bob".utf8))["id"] as! String
        let bobCursor = try bob.send("GET", "/v1/changes/start").json["cursor"] as! Int
        let bytes = Array("x".utf8)
        let boundary = "bnd"
        let multipart = Array("--\(boundary)\r\n\r\n{\"name\":\"m\",\"parentId\":\"\(folder)\"}\r\n--\(boundary)\r\n\r\nx\r\n--\(boundary)--\r\n".utf8)

        let attempts: [(String, () throws -> TestResponse)] = [
            ("get file", { try bob.send("GET", "/v1/files/\(fid)") }),
            ("get folder", { try bob.send("GET", "/v1/files/\(folder)") }),
            ("list folder", { try bob.send("GET", "/v1/files?parentId=\(folder)") }),
            ("create in folder", { try bob.json("POST", "/v1/files", ["name": "x", "parentId": folder]) }),
            ("patch", { try bob.json("PATCH", "/v1/files/\(fid)", ["name": "pwned"], headers: ["If-Match": "1"]) }),
            ("move own file into theirs", { try bob.json("PATCH", "/v1/files/\(bobFile)", ["parentId": folder], headers: ["If-Match": "1"]) }),
            ("delete", { try bob.send("DELETE", "/v1/files/\(fid)", headers: ["If-Match": "1"]) }),
            ("content", { try bob.send("GET", "/v1/files/\(fid)/content") }),
            ("revisions", { try bob.send("GET", "/v1/files/\(fid)/revisions") }),
            ("revision", { try bob.send("GET", "/v1/files/\(fid)/revisions/\(rid)") }),
            ("revision content", { try bob.send("GET", "/v1/files/\(fid)/revisions/\(rid)/content") }),
            ("revision of own file id", { try bob.send("GET", "/v1/files/\(bobFile)/revisions/\(rid)/content") }),
            ("restore", { try bob.send("POST", "/v1/files/\(fid)/revisions/\(rid)/restore", headers: ["If-Match": "1"]) }),
            ("media into folder", { try bob.send("POST", "/v1/upload?uploadType=media&name=x&parentId=\(folder)", body: bytes) }),
            ("media new revision", { try bob.send("POST", "/v1/upload?uploadType=media&fileId=\(fid)", headers: ["If-Match": "1"], body: bytes) }),
            ("multipart into folder", { try bob.send("POST", "/v1/upload?uploadType=multipart", headers: ["Content-Type": "multipart/related; boundary=\(boundary)"], body: multipart) }),
            ("resumable into folder", { try bob.startSession(name: "x", bytes: bytes, parent: folder) }),
            ("resumable new revision", { try bob.startSession(name: "", bytes: bytes, fileId: fid, baseVersion: 1) }),
            ("upload status", { try bob.send("GET", "/v1/upload/\(session)") }),
            ("upload chunk", { try bob.putChunk(session, randomBytes(1500), 0, 1000) }),
            ("upload abort", { try bob.send("DELETE", "/v1/upload/\(session)") }),
        ]
        for (name, attempt) in attempts {
            let r = try attempt()
            XCTAssertEqual(r.status, 404, "\(name): \(r.status) \(r.text)")
            XCTAssertFalse(r.text.contains("alice only"), name)
        }
        // Bob's feed never shows Alice's changes, and his stream gets no event for them.
        _ = try alice.mkdir("more")
        let feed = try bob.send("GET", "/v1/changes?cursor=0").json["changes"] as! [[String: Any]]
        XCTAssertTrue(feed.allSatisfy { ($0["fileId"] as? String) == bobFile || ($0["fileId"] as? String) == "root" })
        XCTAssertEqual((try bob.send("GET", "/v1/changes?cursor=\(bobCursor)").json["changes"] as! [Any]).count, 0)
        // Alice's data is untouched.
        XCTAssertEqual(try alice.send("GET", "/v1/files/\(fid)").json["version"] as? Int, 1)
        XCTAssertEqual(try alice.send("GET", "/v1/files/\(fid)/content").text, "alice only")
        XCTAssertEqual(try alice.send("GET", "/v1/upload/\(session)").status, 200)
        XCTAssertEqual((try alice.send("GET", "/v1/files?parentId=\(folder)").json["files"] as! [Any]).count, 1)
    }
}
