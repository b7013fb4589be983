import XCTest

/// `/v1/files`: create, list with pagination, get, rename/move with If-Match, delete to trash.
final class FilesTests: XCTestCase {
    func testCreateGetListPaginate() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let docs = try u.mkdir("docs")
        let docsId = try XCTUnwrap(docs["id"] as? String)
        XCTAssertEqual(docs["type"] as? String, "folder")
        XCTAssertEqual(docs["version"] as? Int, 1)
        for i in (0..<25).reversed() { _ = try u.json("POST", "/v1/files", ["name": String(format: "f%02d", i), "parentId": docsId]) }
        var names: [String] = []
        var token: String?
        repeat {
            let q = "/v1/files?parentId=\(docsId)&pageSize=7" + (token.map { "&pageToken=\($0)" } ?? "")
            let r = try u.send("GET", q)
            XCTAssertEqual(r.status, 200)
            names += (r.json["files"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            token = r.json["nextPageToken"] as? String
        } while token != nil
        XCTAssertEqual(names, (0..<25).map { String(format: "f%02d", $0) })

        let got = try u.send("GET", "/v1/files/\(docsId)")
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.header("ETag"), "\"1\"")
        XCTAssertEqual(try u.send("GET", "/v1/files/nope").status, 404)
        XCTAssertEqual(try u.send("GET", "/v1/files?parentId=nope").status, 404)
        XCTAssertEqual(try u.send("GET", "/v1/files?pageSize=0").status, 400)
        XCTAssertEqual(try u.send("GET", "/v1/files?pageToken=@@").errorCode, "invalid_page_token")
        let root = try u.send("GET", "/v1/files/root")
        XCTAssertEqual(root.json["type"] as? String, "folder")
    }

    func testNameRules() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        for bad in ["", ".", "..", "a/b", "a\u{0}b", String(repeating: "x", count: 1025)] {
            let r = try u.json("POST", "/v1/files", ["name": bad])
            XCTAssertEqual(r.status, 400, "name \(bad.debugDescription)")
            XCTAssertEqual(r.errorCode, "invalid_name")
        }
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": String(repeating: "x", count: 1024)]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "Same"]).status, 201)
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "same"]).status, 201, "case-sensitive")
        let dup = try u.json("POST", "/v1/files", ["name": "Same"])
        XCTAssertEqual(dup.status, 409)
        XCTAssertEqual(dup.errorCode, "name_conflict")
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "x", "parentId": "missing"]).status, 404)
        let file = try u.json("POST", "/v1/files", ["name": "plain"]).json["id"] as! String
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "x", "parentId": file]).errorCode, "not_a_folder")
        XCTAssertEqual(try u.send("POST", "/v1/files", body: Array("[]".utf8)).status, 400)
    }

    func testPatchNeedsIfMatchAndReportsStaleVersions() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let a = try u.mkdir("a"), b = try u.mkdir("b")
        let aId = a["id"] as! String, bId = b["id"] as! String
        let f = try u.json("POST", "/v1/files", ["name": "note.txt", "parentId": aId]).json
        let id = f["id"] as! String
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id)", ["name": "n2"]).status, 428)
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id)", ["name": "n2"], headers: ["If-Match": "\"x\""]).status, 400)
        let renamed = try u.json("PATCH", "/v1/files/\(id)", ["name": "n2.txt"], headers: ["If-Match": "\"1\""])
        XCTAssertEqual(renamed.status, 200)
        XCTAssertEqual(renamed.json["version"] as? Int, 2)
        XCTAssertEqual(renamed.header("ETag"), "\"2\"")
        let stale = try u.json("PATCH", "/v1/files/\(id)", ["name": "n3.txt"], headers: ["If-Match": "\"1\""])
        XCTAssertEqual(stale.status, 412)
        XCTAssertEqual(stale.json["version"] as? Int, 2, "412 carries the current file")
        XCTAssertEqual(stale.json["name"] as? String, "n2.txt")
        let moved = try u.json("PATCH", "/v1/files/\(id)", ["parentId": bId], headers: ["If-Match": "2"])
        XCTAssertEqual(moved.status, 200)
        XCTAssertEqual(moved.json["parentId"] as? String, bId)
        _ = try u.json("POST", "/v1/files", ["name": "n2.txt", "parentId": aId])
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id)", ["parentId": aId], headers: ["If-Match": "3"]).status, 409)
        XCTAssertEqual(try u.json("PATCH", "/v1/files/\(id)", ["name": "a/b"], headers: ["If-Match": "3"]).status, 400)
        let sub = try u.mkdir("sub", parent: aId)["id"] as! String
        let cycle = try u.json("PATCH", "/v1/files/\(aId)", ["parentId": sub], headers: ["If-Match": "1"])
        XCTAssertEqual(cycle.errorCode, "cycle")
        XCTAssertEqual(try u.json("PATCH", "/v1/files/root", ["name": "x"], headers: ["If-Match": "1"]).status, 400)
        XCTAssertEqual(try u.json("PATCH", "/v1/files/missing", ["name": "x"], headers: ["If-Match": "1"]).status, 404)
    }

    func testDeleteMovesToTrashAndRestore() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let f = try u.upload("doc.txt", Array("v1".utf8))
        let id = f["id"] as! String
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(id)").status, 428)
        XCTAssertEqual(try u.send("DELETE", "/v1/files/\(id)", headers: ["If-Match": "\"9\""]).status, 412)
        let del = try u.send("DELETE", "/v1/files/\(id)", headers: ["If-Match": "\"1\""])
        XCTAssertEqual(del.status, 200)
        XCTAssertEqual(del.json["trashed"] as? Bool, true)
        let list = try u.send("GET", "/v1/files").json["files"] as? [[String: Any]] ?? []
        XCTAssertFalse(list.contains { $0["id"] as? String == id })
        XCTAssertEqual(try u.send("GET", "/v1/files/\(id)/revisions").json["revisions"].map { ($0 as! [Any]).count }, 1,
                       "trash keeps revisions")
        _ = try u.upload("doc.txt", Array("other".utf8))
        let clash = try u.json("PATCH", "/v1/files/\(id)", ["trashed": false], headers: ["If-Match": "2"])
        XCTAssertEqual(clash.status, 409)
        let back = try u.json("PATCH", "/v1/files/\(id)", ["trashed": false, "name": "doc (restored).txt"], headers: ["If-Match": "2"])
        XCTAssertEqual(back.status, 200)
        XCTAssertEqual(back.json["trashed"] as? Bool, false)
        XCTAssertEqual(try u.send("DELETE", "/v1/files/root", headers: ["If-Match": "1"]).status, 400)
        XCTAssertEqual(try u.send("DELETE", "/v1/files/missing", headers: ["If-Match": "1"]).status, 404)
    }

    func testContentDownloadRangeAndIfRange() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(100_000)
        let f = try u.upload("blob.bin", bytes)
        let id = f["id"] as! String
        XCTAssertEqual(f["sha256"] as? String, sha256Hex(bytes))
        let whole = try u.send("GET", "/v1/files/\(id)/content")
        XCTAssertEqual(whole.status, 200)
        XCTAssertEqual(whole.body, bytes)
        XCTAssertEqual(whole.header("ETag"), "\"1\"")
        XCTAssertEqual(whole.header("Accept-Ranges"), "bytes")
        let part = try u.send("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=10-19"])
        XCTAssertEqual(part.status, 206)
        XCTAssertEqual(part.body, Array(bytes[10...19]))
        XCTAssertEqual(part.header("Content-Range"), "bytes 10-19/100000")
        let tail = try u.send("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=-5"])
        XCTAssertEqual(tail.body, Array(bytes[99_995...]))
        let open = try u.send("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=99990-"])
        XCTAssertEqual(open.body, Array(bytes[99_990...]))
        let bad = try u.send("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=200000-"])
        XCTAssertEqual(bad.status, 416)
        XCTAssertEqual(bad.header("Content-Range"), "bytes */100000")
        let ifRangeOK = try u.send("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=0-0", "If-Range": "\"1\""])
        XCTAssertEqual(ifRangeOK.status, 206)
        let ifRangeStale = try u.send("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=0-0", "If-Range": "\"7\""])
        XCTAssertEqual(ifRangeStale.status, 200)
        // HTAB is allowed in a header value (RFC 9110; docs/openapi.yaml says so): never a 400.
        for headers in [["Range": "bytes=0-0\t"], ["Range": "bytes=\t0-0"], ["Range": "bytes=0-0", "If-Range": "W/\t\"1\""]] {
            XCTAssertNotEqual(try u.send("GET", "/v1/files/\(id)/content", headers: headers).status, 400, "\(headers)")
        }
        XCTAssertEqual(ifRangeStale.body.count, 100_000)
        let folder = try u.mkdir("d")["id"] as! String
        XCTAssertEqual(try u.send("GET", "/v1/files/\(folder)/content").status, 400)
        XCTAssertEqual(try u.send("GET", "/v1/files/missing/content").status, 404)
        let empty = try u.json("POST", "/v1/files", ["name": "empty"]).json["id"] as! String
        let e = try u.send("GET", "/v1/files/\(empty)/content")
        XCTAssertEqual(e.status, 200)
        XCTAssertEqual(e.body.count, 0)
    }
}
