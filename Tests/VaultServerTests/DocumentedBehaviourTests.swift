import XCTest
@testable import VaultServer

/// What `docs/openapi.yaml` promises and schemathesis found untrue (issue 9, item 16), checked
/// fast and by hand; `scripts/check-openapi-behaviour.sh` checks the whole document.
final class DocumentedBehaviourTests: XCTestCase {
    /// An empty `Last-Event-ID` counts as absent, so `?cursor=` is honoured (it was ignored
    /// whenever the header was present at all).
    func testEventsHonourTheCursorWhenLastEventIDIsEmpty() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        try u.mkdir("a")   // the feed now has an entry after cursor 0
        for header in ["Last-Event-ID: \r\n", ""] {
            let fd = try s.client.connect(timeout: 10)
            defer { close(fd) }
            let head = "GET /v1/events?cursor=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(u.token)\r\n\(header)\r\n"
            try s.client.writeAll(fd, Array(head.utf8))
            var text = ""
            XCTAssertTrue(s.client.read(fd, until: "event: changed", into: &text, timeout: 10),
                          "cursor=0 with \(header.isEmpty ? "no" : "an empty") Last-Event-ID streams the change at once: \(text)")
        }
        // A non-empty Last-Event-ID wins over the query (a browser's reconnect), and both are checked.
        XCTAssertEqual(try u.send("GET", "/v1/events?cursor=x", headers: ["Last-Event-ID": "5"]).errorCode, "invalid_cursor")
        XCTAssertEqual(try u.send("GET", "/v1/events?cursor=0", headers: ["Last-Event-ID": "x"]).errorCode, "invalid_cursor")
    }

    /// Every field of every JSON body is given with its type or left out: an explicit `null` is
    /// a 400; unknown fields are ignored whatever they hold.
    func testExplicitNullIsRefusedInEveryDeclaredField() throws {
        let s = try ServerProcess(args: ["--test-faults"])
        let u = try APIUser(s, "alice")
        let f = try u.upload("f", [1])
        let id = f["id"] as! String
        let sha = String(repeating: "0", count: 64)
        let bodies: [(String, String, [String: String], String, [String])] = [
            ("POST", "/v1/files", [:], #"{"name":"n","type":"folder"}"#, ["parentId", "type", "mimeType", "name", "id", "meta"]),
            ("PATCH", "/v1/files/\(id)", ["If-Match": "\"1\""], #"{}"#, ["name", "parentId", "mimeType", "trashed", "meta"]),
            ("POST", "/v1/upload?uploadType=resumable", [:], #"{"name":"r","size":1,"sha256":"\#(sha)","requestId":"q"}"#,
             ["name", "parentId", "mimeType", "fileId", "baseVersion", "size", "sha256", "requestId", "id", "meta", "contentMeta"]),
            ("POST", "/v1/auth/token", [:], #"{"username":"alice","password":"pw-alice"}"#, ["username", "password"]),
        ]
        for (method, path, headers, base, fields) in bodies {
            for field in fields {
                var object = try JSONSerialization.jsonObject(with: Data(base.utf8)) as! [String: Any]
                object[field] = NSNull()
                let body = try JSONSerialization.data(withJSONObject: object)
                let r = try u.send(method, path, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                                   body: [UInt8](body))
                XCTAssertEqual(r.status, 400, "\(method) \(path) with \(field): null → \(r.text)")
                XCTAssertEqual(r.errorCode, "invalid_json", "\(method) \(path) \(field)")
            }
        }
        let faults = try s.client.send("POST", "/v1/test/faults", body: Array(#"{"delayMs":null}"#.utf8))
        XCTAssertEqual(faults.status, 400)
        let unknown = try u.json("POST", "/v1/files", ["name": "u", "type": "folder", "extra": NSNull(), "more": ["x": NSNull()]])
        XCTAssertEqual(unknown.status, 201, "unknown fields are ignored, nulls included: \(unknown.text)")
        XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "a", "type": "folder", "parentId": "root\u{0}"]).errorCode, "invalid_id")
        XCTAssertEqual(try u.send("POST", "/v1/files", body: Array("[1]".utf8)).errorCode, "invalid_json", "a body is an object")
    }

    /// Content is served with the file's own media type; media types are `type/subtype`
    /// wherever they arrive; an upload's 201 is a File or an UploadSession, never both.
    func testMediaTypesAndUploadAnswers() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let text = try u.send("POST", "/v1/upload?uploadType=media&name=t.txt", headers: ["Content-Type": "text/plain; charset=utf-8"],
                              body: Array("hi".utf8))
        XCTAssertEqual(text.status, 201)
        XCTAssertEqual(text.json["mimeType"] as? String, "text/plain", "parameters are dropped")
        XCTAssertNil(text.json["uploadId"], "a File has no uploadId")
        let content = try u.send("GET", "/v1/files/\(text.json["id"] as! String)/content")
        XCTAssertEqual(content.header("Content-Type"), "text/plain", "served with its own type")
        for bad in ["text", "text/", "/plain", "text/plain/x", "tëxt/plain", "text/pla in", "Ð»", "a/b;c=d"] {
            XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&name=x", headers: ["Content-Type": bad], body: [1]).status,
                           bad == "a/b;c=d" ? 201 : 400, "Content-Type \(bad)")
            XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "m", "type": "folder", "mimeType": bad]).errorCode, "invalid_mime_type", bad)
        }
        let session = try u.startSession(name: "s", bytes: [1, 2])
        XCTAssertEqual(session.status, 201)
        XCTAssertNotNil(session.json["uploadId"])
        XCTAssertNil(session.json["id"], "an UploadSession has no id")
    }

    /// The patterns and bounds the document states are the ones the server applies.
    func testDocumentStatesTheServersRules() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        let doc = try String(contentsOf: url, encoding: .utf8)
        for (what, pattern) in [("If-Match", VaultService.versionPattern), ("Content-Range", ByteRanges.contentRangePattern),
                                ("media types", VaultService.mediaTypePattern),
                                ("Range and If-Range", RequestDecoding.headerTextPattern)] {
            XCTAssertTrue(doc.contains("pattern: '\(pattern)'"), "docs/openapi.yaml states the \(what) pattern \(pattern)")
        }
        let serverDoc = try String(contentsOf: url.deletingLastPathComponent().appendingPathComponent("server.md"), encoding: .utf8)
        let names = "1–\(VaultService.maxNameBytes) bytes of UTF-8"
        XCTAssertTrue(doc.contains(names) && serverDoc.contains(names), "both documents state the server's name limit")
        XCTAssertFalse(serverDoc.contains("1–255 bytes"), "docs/server.md states the client's limit as the server's")
        XCTAssertEqual(doc.components(separatedBy: "pattern: '\(RequestDecoding.headerTextPattern)'").count - 1, 2,
                       "both Range and If-Range allow HTAB, as the server does")
        XCTAssertTrue(doc.contains("maximum: \(VaultService.maxVersion)"))
        let faultLines = doc.components(separatedBy: "\n").drop { !$0.hasPrefix("    FaultSettings:") }
        for bound in VaultService.faultBounds {
            let line = faultLines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("\(bound.name):") } ?? ""
            XCTAssertTrue(line.contains("minimum: \(bound.range.lowerBound)"), "\(bound.name): \(line)")
            if bound.range.upperBound != .max {
                XCTAssertTrue(line.contains("maximum: \(bound.range.upperBound)"), "\(bound.name): \(line)")
            }
        }
    }
}
