import XCTest

/// Revisions: list, details, content, restore, retention.
final class RevisionTests: XCTestCase {
    func testRevisionsListGetContentRestore() throws {
        let s = try ServerProcess(args: ["--revisions-keep", "3"])
        var u = try APIUser(s, "alice")
        u.device = "laptop-1"
        let f = try u.upload("doc.txt", Array("v1".utf8))
        let id = f["id"] as! String
        for (i, text) in ["v2", "v3", "v4"].enumerated() {
            let r = try u.send("POST", "/v1/upload?uploadType=media&fileId=\(id)", headers: ["If-Match": "\(i + 1)"], body: Array(text.utf8))
            XCTAssertEqual(r.status, 201)
        }
        let list = try u.send("GET", "/v1/files/\(id)/revisions")
        XCTAssertEqual(list.status, 200)
        let revs = list.json["revisions"] as! [[String: Any]]
        XCTAssertEqual(revs.count, 3, "retention keeps 3")
        XCTAssertEqual(revs.first?["isHead"] as? Bool, true)
        XCTAssertEqual(revs.first?["deviceId"] as? String, "laptop-1")
        let oldest = revs.last!["id"] as! String
        let detail = try u.send("GET", "/v1/files/\(id)/revisions/\(oldest)")
        XCTAssertEqual(detail.status, 200)
        XCTAssertEqual(detail.json["sha256"] as? String, sha256Hex(Array("v2".utf8)))
        let content = try u.send("GET", "/v1/files/\(id)/revisions/\(oldest)/content")
        XCTAssertEqual(content.text, "v2")
        let ranged = try u.send("GET", "/v1/files/\(id)/revisions/\(oldest)/content", headers: ["Range": "bytes=1-1"])
        XCTAssertEqual(ranged.status, 206)
        XCTAssertEqual(ranged.text, "2")

        XCTAssertEqual(try u.send("POST", "/v1/files/\(id)/revisions/\(oldest)/restore").status, 428)
        XCTAssertEqual(try u.send("POST", "/v1/files/\(id)/revisions/\(oldest)/restore", headers: ["If-Match": "1"]).status, 412)
        let restored = try u.send("POST", "/v1/files/\(id)/revisions/\(oldest)/restore", headers: ["If-Match": "4"])
        XCTAssertEqual(restored.status, 200)
        XCTAssertEqual(restored.json["version"] as? Int, 5)
        XCTAssertNotEqual(restored.json["headRevisionId"] as? String, oldest, "restore makes a new head revision")
        XCTAssertEqual(try u.send("GET", "/v1/files/\(id)/content").text, "v2")
        let after = try u.send("GET", "/v1/files/\(id)/revisions").json["revisions"] as! [[String: Any]]
        XCTAssertEqual(after.count, 3)
        XCTAssertEqual(Set(after.compactMap { $0["sha256"] as? String }),
                       Set(["v2", "v3", "v4"].map { sha256Hex(Array($0.utf8)) }), "v3 and v4 are still kept")

        XCTAssertEqual(try u.send("GET", "/v1/files/\(id)/revisions/nope").status, 404)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(id)/revisions/nope/content").status, 404)
        XCTAssertEqual(try u.send("POST", "/v1/files/\(id)/revisions/nope/restore", headers: ["If-Match": "5"]).status, 404)
        XCTAssertEqual(try u.send("GET", "/v1/files/nope/revisions").status, 404)
        let other = try u.upload("other", Array("o".utf8))["id"] as! String
        XCTAssertEqual(try u.send("GET", "/v1/files/\(other)/revisions/\(oldest)").status, 404, "a revision of another file")
        XCTAssertEqual(try s.storedRevisionCount(), 4, "pruned revisions free their content (3 kept + 1 other file)")
    }
}
