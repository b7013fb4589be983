import XCTest
import VaultTestSupport

/// Malformed and random requests never crash the server.
final class RobustnessTests: XCTestCase {
    func testGarbageRequestsLeaveTheServerUp() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let id = try u.startSession(name: "f", bytes: randomBytes(1500)).json["uploadId"] as! String
        let headerValues = ["", "bytes", "bytes -", "bytes 5-1/10", "bytes 0-99999999999999999999/1",
                            "bytes=0-1", "bytes */", "bytes 0-0/-1", "\u{7f}\u{1}", String(repeating: "9", count: 500)]
        for v in headerValues {
            for (m, p, h) in [("PUT", "/v1/upload/\(id)/chunk", "Content-Range"), ("GET", "/v1/files/root/content", "Range"),
                              ("PATCH", "/v1/files/root", "If-Match")] {
                let r = try u.send(m, p, headers: [h: v], body: m == "GET" ? [] : randomBytes(20))
                XCTAssertLessThan(r.status, 500, "\(m) \(p) \(h): \(v.debugDescription) → \(r.status) \(r.text)")
            }
        }
        for v in ["-1", "x", String(repeating: "9", count: 40)] {
            let r = try u.send("GET", "/v1/events", headers: ["Last-Event-ID": v])   // invalid: answered, not streamed
            XCTAssertEqual(r.status, 400, v)
        }
        var g = SeededGenerator(test: self.name)
        for i in 0..<150 {
            let fd = try s.client.connect(timeout: 3)
            var junk = randomBytes(Int.random(in: 1...600, using: &g))
            if i % 3 == 0 { junk = Array("POST /v1/files HTTP/1.1\r\nAuthorization: Bearer \(u.token)\r\nContent-Length: \(junk.count)\r\n\r\n".utf8) + junk }
            if i % 3 == 1 { junk = Array("GET /v1/\(String(decoding: junk.prefix(40), as: UTF8.self)) HTTP/1.1\r\n\r\n".utf8) }
            try? s.client.writeAll(fd, junk)
            shutdown(fd, Int32(SHUT_WR))
            _ = try? s.client.readAll(fd)
            close(fd)
        }
        for path in ["/v1/files?pageSize=abc", "/v1/files?pageToken=%00%ff", "/v1/changes?cursor=-5", "/v1/changes?cursor=99999999999999999999",
                     "/v1/files/%2e%2e/content", "/v1/upload/%00", "/v1/files/" + String(repeating: "a", count: 3000)] {
            XCTAssertLessThan(try u.send("GET", path).status, 500, path)
        }
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 200, "still serving")
    }
}
