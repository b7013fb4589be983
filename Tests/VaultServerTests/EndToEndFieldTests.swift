import XCTest

/// What end-to-end encryption needs from the server: client-chosen ids, opaque records kept per
/// node and per revision, and an account key envelope replaced only with If-Match.
final class EndToEndFieldTests: XCTestCase {
    let idA = String(repeating: "a", count: 32), idB = String(repeating: "b", count: 32)

    func testClientIdsAndRecordsAreKeptAndReturned() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let folder = try u.json("POST", "/v1/files", ["name": "1.tokenA", "type": "folder", "id": idA, "meta": "1.metaA"])
        XCTAssertEqual(folder.status, 201)
        XCTAssertEqual(folder.json["id"] as? String, idA)
        XCTAssertEqual(folder.json["meta"] as? String, "1.metaA")
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "other", "id": idA]).errorCode, "id_taken")
        for bad in ["AAAA", String(repeating: "A", count: 32), String(repeating: "g", count: 32), "root"] {
            XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "x", "id": bad]).errorCode, "invalid_id", bad)
        }
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "x", "meta": String(repeating: "m", count: 4097)]).errorCode, "invalid_record")
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "x", "meta": "has space"]).errorCode, "invalid_record")
        // Another user may use the same id: ids are per account.
        XCTAssertEqual(try APIUser(s, "bob").json("POST", "/v1/files", ["name": "b", "id": idA]).status, 201)

        // A resumable upload of a new file with its id, node record and content record.
        let bytes = Array("sealed bytes".utf8)
        let start = try u.json("POST", "/v1/upload?uploadType=resumable", [
            "name": "1.tokenB", "parentId": idA, "size": bytes.count, "sha256": sha256Hex(bytes), "requestId": "r1",
            "id": idB, "meta": "1.metaB", "contentMeta": "1.content1"])
        XCTAssertEqual(start.status, 201, start.text)
        let url = start.json["uploadUrl"] as! String
        let done = try u.send("PUT", url, headers: ["Content-Range": "bytes 0-\(bytes.count - 1)/\(bytes.count)"], body: bytes)
        XCTAssertEqual(done.status, 201, done.text)
        XCTAssertEqual(done.json["id"] as? String, idB)
        XCTAssertEqual(done.json["meta"] as? String, "1.metaB")
        XCTAssertEqual(done.json["contentMeta"] as? String, "1.content1")

        // Rename with a new record; a new revision with a new content record; restore with another.
        let renamed = try u.json("PATCH", "/v1/files/\(idB)", ["name": "1.tokenC", "meta": "1.metaC"], headers: ["If-Match": "1"])
        XCTAssertEqual(renamed.json["meta"] as? String, "1.metaC")
        let rev2 = try u.json("POST", "/v1/upload?uploadType=resumable", [
            "size": 2, "sha256": sha256Hex([1, 2]), "requestId": "r2", "fileId": idB, "baseVersion": 2, "contentMeta": "1.content2"])
        let put2 = try u.send("PUT", rev2.json["uploadUrl"] as! String, headers: ["Content-Range": "bytes 0-1/2"], body: [1, 2])
        XCTAssertEqual(put2.json["contentMeta"] as? String, "1.content2")
        XCTAssertEqual(put2.json["meta"] as? String, "1.metaC", "a new revision keeps the node record")
        let revs = try u.send("GET", "/v1/files/\(idB)/revisions").json["revisions"] as! [[String: Any]]
        XCTAssertEqual(revs.map { $0["contentMeta"] as? String }, ["1.content2", "1.content1"])
        let old = revs[1]["id"] as! String
        let restored = try u.json("POST", "/v1/files/\(idB)/revisions/\(old)/restore", ["contentMeta": "1.content3"], headers: ["If-Match": "3"])
        XCTAssertEqual(restored.status, 200, restored.text)
        XCTAssertEqual(restored.json["contentMeta"] as? String, "1.content3")
        XCTAssertEqual(try u.send("GET", "/v1/files/\(idB)/content").body, bytes)
        let plain = try u.send("POST", "/v1/files/\(idB)/revisions/\(old)/restore", headers: ["If-Match": "4"])
        XCTAssertEqual(plain.json["contentMeta"] as? String, "1.content1", "without a body the old record is copied")
        // The change feed carries the records too.
        let feed = try u.send("GET", "/v1/changes?cursor=0").json["changes"] as! [[String: Any]]
        XCTAssertEqual((feed.last?["file"] as? [String: Any])?["contentMeta"] as? String, "1.content1")
    }

    func testEnvelopeIsReplacedOnlyWithIfMatch() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        XCTAssertEqual(try u.send("GET", "/v1/keys/envelope").errorCode, "no_envelope")
        XCTAssertEqual(try u.json("PUT", "/v1/keys/envelope", ["envelope": "v1"]).status, 428, "neither If-Match nor If-None-Match")
        let created = try u.json("PUT", "/v1/keys/envelope", ["envelope": "line1\nline2\n"], headers: ["If-None-Match": "*"])
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.json["version"] as? Int, 1)
        XCTAssertEqual(try u.json("PUT", "/v1/keys/envelope", ["envelope": "again"], headers: ["If-None-Match": "*"]).status, 412)
        let got = try u.send("GET", "/v1/keys/envelope")
        XCTAssertEqual(got.json["envelope"] as? String, "line1\nline2\n")
        XCTAssertEqual(got.header("etag"), "\"1\"")
        // Two devices change it from version 1: the second is told, with the current envelope.
        XCTAssertEqual(try u.json("PUT", "/v1/keys/envelope", ["envelope": "from A"], headers: ["If-Match": "\"1\""]).status, 200)
        let late = try u.json("PUT", "/v1/keys/envelope", ["envelope": "from B"], headers: ["If-Match": "\"1\""])
        XCTAssertEqual(late.status, 412)
        XCTAssertEqual(late.json["envelope"] as? String, "from A")
        XCTAssertEqual(late.json["version"] as? Int, 2)
        XCTAssertEqual(try u.json("PUT", "/v1/keys/envelope", ["envelope": "bad\u{1}"], headers: ["If-Match": "2"]).errorCode, "invalid_envelope")
        // A device in step asks cheaply: If-None-Match naming the current version is a 304 without a body.
        let same = try u.send("GET", "/v1/keys/envelope", headers: ["If-None-Match": "\"2\""])
        XCTAssertEqual(same.status, 304)
        XCTAssertTrue(same.body.isEmpty)
        XCTAssertEqual(try u.send("GET", "/v1/keys/envelope", headers: ["If-None-Match": "\"1\""]).json["envelope"] as? String, "from A")
        XCTAssertEqual(try u.send("GET", "/v1/keys/envelope", headers: ["If-None-Match": "*"]).status, 400)
        // Isolation: another user has none.
        XCTAssertEqual(try APIUser(s, "bob").send("GET", "/v1/keys/envelope").status, 404)
    }

    func testFlatListingPagesEveryLiveNodeById() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        var ids: [String] = []
        var parent = "root"
        for i in 0..<25 {
            let r = try u.json("POST", "/v1/files", ["name": "n\(i)", "type": "folder", "parentId": parent])
            ids.append(r.json["id"] as! String)
            if i % 5 == 4 { parent = ids.last! }
        }
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(ids[3])", headers: ["If-Match": "1"]).status, 200)
        var seen: [String] = [], token: String?
        repeat {
            let r = try u.send("GET", "/v1/files?scope=all&pageSize=7" + (token.map { "&pageToken=\($0)" } ?? ""))
            XCTAssertEqual(r.status, 200, r.text)
            seen += (r.json["files"] as! [[String: Any]]).map { $0["id"] as! String }
            token = r.json["nextPageToken"] as? String
        } while token != nil
        XCTAssertEqual(seen, ids.filter { $0 != ids[3] }.sorted(), "every live node once, in id order, root and trashed left out")
        XCTAssertEqual(try u.send("GET", "/v1/files?scope=some").errorCode, "invalid_scope")
        XCTAssertEqual(try u.send("GET", "/v1/files?scope=all&pageToken=@@").errorCode, "invalid_page_token")
        XCTAssertEqual((try APIUser(s, "bob").send("GET", "/v1/files?scope=all").json["files"] as! [Any]).count, 0)
    }
}
