import XCTest

/// The change feed and the SSE push channel.
final class ChangesTests: XCTestCase {
    func testFeedListsEveryKindOnceInOrder() throws {
        let s = try ServerProcess()
        var u = try APIUser(s, "alice")
        u.device = "phone"
        let start = try u.send("GET", "/v1/changes/start")
        XCTAssertEqual(start.status, 200)
        let cursor = try XCTUnwrap(start.json["cursor"] as? Int)
        let folder = try u.mkdir("d")["id"] as! String
        let f = try u.upload("a.txt", Array("1".utf8))
        let id = f["id"] as! String
        _ = try u.send("POST", "/v1/upload?uploadType=media&fileId=\(id)", headers: ["If-Match": "1"], body: Array("2".utf8))
        _ = try u.json("PATCH", "/v1/files/\(id)", ["parentId": folder], headers: ["If-Match": "2"])
        _ = try u.send("DELETE", "/v1/files/\(id)", headers: ["If-Match": "3"])
        _ = try u.json("PATCH", "/v1/files/\(id)", ["trashed": false], headers: ["If-Match": "4"])

        var kinds: [String] = []
        var c = cursor
        var pages = 0
        while true {
            let r = try u.send("GET", "/v1/changes?cursor=\(c)&limit=2")
            XCTAssertEqual(r.status, 200)
            let changes = r.json["changes"] as! [[String: Any]]
            kinds += changes.compactMap { $0["kind"] as? String }
            if let first = changes.first { XCTAssertEqual(first["deviceId"] as? String, "phone") }
            for ch in changes { XCTAssertGreaterThan(ch["cursor"] as! Int, c) }
            c = r.json["nextCursor"] as! Int
            pages += 1
            if r.json["hasMore"] as? Bool != true { break }
        }
        XCTAssertEqual(kinds, ["created", "created", "updated", "moved", "deleted", "restored"])
        XCTAssertEqual(pages, 3)
        let empty = try u.send("GET", "/v1/changes?cursor=\(c)")
        XCTAssertEqual((empty.json["changes"] as! [Any]).count, 0)
        XCTAssertEqual(empty.json["nextCursor"] as? Int, c)
        let deleted = try u.send("GET", "/v1/changes?cursor=\(cursor)").json["changes"] as! [[String: Any]]
        XCTAssertEqual((deleted[4]["file"] as? [String: Any])?["trashed"] as? Bool, true, "deletes are tombstones")
        XCTAssertEqual(try u.send("GET", "/v1/changes").status, 400)
        XCTAssertEqual(try u.send("GET", "/v1/changes?cursor=0&limit=0").status, 400)
    }

    func testExpiredCursorIs410() throws {
        let s = try ServerProcess(args: ["--changes-keep", "3"])
        let u = try APIUser(s, "alice")
        let c0 = try u.send("GET", "/v1/changes/start").json["cursor"] as! Int
        for i in 0..<6 { _ = try u.mkdir("d\(i)") }
        let r = try u.send("GET", "/v1/changes?cursor=\(c0)")
        XCTAssertEqual(r.status, 410)
        XCTAssertEqual(r.errorCode, "cursor_expired")
        let fresh = try u.send("GET", "/v1/changes/start").json["cursor"] as! Int
        XCTAssertEqual(try u.send("GET", "/v1/changes?cursor=\(fresh)").status, 200)
    }

    func testEventStreamSignalsChangesAndHonoursLastEventID() throws {
        let s = try ServerProcess(args: ["--keepalive", "1"])
        let u = try APIUser(s, "alice")
        let c0 = try u.send("GET", "/v1/changes/start").json["cursor"] as! Int
        let fd = try s.client.connect(timeout: 10)
        defer { close(fd) }
        try s.client.writeAll(fd, s.client.requestHead("GET", "/v1/events", headers: ["Authorization": "Bearer \(u.token)"], bodyLength: nil))
        var text = ""
        XCTAssertTrue(s.client.read(fd, until: ": connected", into: &text, timeout: 5), text)
        XCTAssertTrue(text.contains("text/event-stream"))
        _ = try u.mkdir("pushed")
        XCTAssertTrue(s.client.read(fd, until: "event: changed", into: &text, timeout: 5), text)
        XCTAssertTrue(s.client.read(fd, until: "\"cursor\"", into: &text, timeout: 5), text)
        XCTAssertFalse(text.contains("pushed"), "events carry only the cursor")
        XCTAssertTrue(s.client.read(fd, until: ": keep-alive", into: &text, timeout: 5), text)

        // Reconnecting with Last-Event-ID older than the feed gets an event at once.
        let fd2 = try s.client.connect(timeout: 10)
        defer { close(fd2) }
        try s.client.writeAll(fd2, s.client.requestHead("GET", "/v1/events", headers: ["Authorization": "Bearer \(u.token)", "Last-Event-ID": "\(c0)"], bodyLength: nil))
        var text2 = ""
        XCTAssertTrue(s.client.read(fd2, until: "event: changed", into: &text2, timeout: 5), text2)
        XCTAssertEqual(try s.client.send("GET", "/v1/events").status, 401)
        XCTAssertEqual(s.stop(), 0, "shutdown ends open streams")
    }
}
