import XCTest

/// Every number a request carries, sent to the real server process at and past the edges of
/// `Int64` and of each sum the server computes with it (quota, chunk positions, ranges, page
/// sizes, cursors, versions, fault switches): the answer is a clear 4xx (or the ordinary answer
/// where the value is legitimate), and the server keeps serving. One session of size
/// `Int64.max` from a user who already stored a byte once killed the process (issue 9, item 2).
final class BoundaryValueTests: XCTestCase {
    static let max = String(Int64.max), maxMinus1 = String(Int64.max - 1), min = String(Int64.min)
    static let past = "9223372036854775808", u64max = "18446744073709551615", huge = "99999999999999999999999"
    /// The largest size, position, version and cursor a request may carry (18 digits).
    static let max18 = "999999999999999999"
    static let sha = String(repeating: "0", count: 64)

    /// Sends one request, checks its status, then checks the server still serves.
    func probe(_ s: ServerProcess, _ u: APIUser, _ what: String, _ expected: Set<Int>,
               file: StaticString = #filePath, line: UInt = #line, _ send: () throws -> TestResponse) {
        do {
            let r = try send()
            XCTAssertTrue(expected.contains(r.status), "\(what) → \(r.status) \(r.text.prefix(300)); expected \(expected.sorted())",
                          file: file, line: line)
        } catch {
            XCTFail("\(what): \(error)", file: file, line: line)
        }
        s.assertStillServing(u, what, file: file, line: line)
    }

    func sessionBody(size: String, requestId: String, extra: String = #","name":"s""#) -> [UInt8] {
        Array(#"{"size":\#(size),"sha256":"\#(Self.sha)","requestId":"\#(requestId)"\#(extra)}"#.utf8)
    }

    func testResumableSessionSizesAndVersionsNearOverflow() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let one = try u.upload("one", [7])   // the user already stores a byte
        let fileId = one["id"] as! String
        let quota = Int64(1) << 40
        let sizes: [(String, Set<Int>)] = [
            (Self.max, [400]), (Self.maxMinus1, [400]), (String(Int64.max - quota), [400]), ("1000000000000000000", [400]),
            (Self.max18, [413]), (String(quota), [413]),
            (Self.min, [400]), ("-1", [400]), (Self.past, [400]), (Self.u64max, [400]), (Self.huge, [400]),
            ("1.5", [400]), (#""5""#, [400]), ("null", [400]), ("true", [400]), ("[]", [400]),
            (String(quota - 1), [201]),   // usage + size == quota exactly: accepted
        ]
        for (i, (size, expected)) in sizes.enumerated() {
            probe(s, u, "session size \(size)", expected) {
                let r = try u.send("POST", "/v1/upload?uploadType=resumable", body: sessionBody(size: size, requestId: "r\(i)"))
                if r.status == 201, let id = r.json["uploadId"] as? String {
                    XCTAssertEqual(try u.send("DELETE", "/v1/upload/\(id)").status, 204)
                }
                return r
            }
        }
        let versions: [(String, Set<Int>)] = [
            (Self.max, [400]), ("999999999999999999", [412]), ("2", [412]), ("0", [400]), ("-1", [400]),
            (Self.min, [400]), (Self.past, [400]), ("1.5", [400]),
        ]
        for (i, (v, expected)) in versions.enumerated() {
            probe(s, u, "session baseVersion \(v)", expected) {
                try u.send("POST", "/v1/upload?uploadType=resumable",
                           body: sessionBody(size: "1", requestId: "v\(i)", extra: #","fileId":"\#(fileId)","baseVersion":\#(v)"#))
            }
            probe(s, u, "multipart baseVersion \(v)", expected) {
                let b = "b0undary"
                let meta = #"{"name":"m","fileId":"\#(fileId)","baseVersion":\#(v)}"#
                let body = "--\(b)\r\nContent-Type: application/json\r\n\r\n\(meta)\r\n--\(b)\r\nContent-Type: application/octet-stream\r\n\r\nx\r\n--\(b)--\r\n"
                return try u.send("POST", "/v1/upload?uploadType=multipart",
                                  headers: ["Content-Type": "multipart/related; boundary=\(b)"], body: Array(body.utf8))
            }
        }
    }

    /// With a quota of `Int64.max`, sessions of the largest size (10^18 - 1) add up past
    /// `Int64.max`: usage saturates and the next session is a 413, not a trap. Their chunk
    /// arithmetic does not overflow, and a chunk at the far end of one is more than any file
    /// system holds (413, not a crash or a 500).
    func testLargestSessionsWithAnUnlimitedQuota() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000", "--quota", Self.max, "--test-faults"])
        try XCTSkipIf(s.bucket != nil, "declares 10^15 chunks of 1000 bytes; on S3 a session stays within 10,000 parts (S3ContentTests.testSessionChunkSizeKeepsWithinTenThousandParts)")
        let u = try APIUser(s, "alice")
        try u.upload("one", [7])
        var ids: [String] = []
        for i in 0..<9 {
            probe(s, u, "session \(i) of \(Self.max18) bytes", [201]) {
                let r = try u.send("POST", "/v1/upload?uploadType=resumable", body: sessionBody(size: Self.max18, requestId: "s\(i)",
                                                                                              extra: #","name":"s\#(i)""#))
                ids.append(r.json["uploadId"] as? String ?? "")
                XCTAssertEqual(r.json["totalChunks"] as? Int, 1_000_000_000_000_000, "rounded up without overflow")
                return r
            }
        }
        probe(s, u, "a tenth: usage would pass Int64.max", [413]) {
            try u.send("POST", "/v1/upload?uploadType=resumable", body: sessionBody(size: Self.max18, requestId: "t", extra: #","name":"t""#))
        }
        let id = ids[0]
        probe(s, u, "status of a largest session", [200]) { try u.send("GET", "/v1/upload/\(id)") }
        XCTAssertEqual(try s.client.send("POST", "/v1/test/faults", body: Array(#"{"lieReceivedRanges":true}"#.utf8)).status, 200)
        probe(s, u, "status claiming all 10^15 chunks of it (a test lie)", [200]) {
            let r = try u.send("GET", "/v1/upload/\(id)")
            XCTAssertEqual(r.json["chunksProcessed"] as? Int, 1_000_000_000_000_000)
            return r
        }
        XCTAssertEqual(try s.client.send("POST", "/v1/test/faults", body: Array("{}".utf8)).status, 200)
        probe(s, u, "the last chunk, past what the file system holds", [413]) {
            try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 999999999999999000-999999999999999998/\(Self.max18)"],
                       body: randomBytes(999))
        }
        probe(s, u, "a chunk past the end", [416]) {
            try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes \(Self.max18)-\(Self.max18)/*"], body: [1])
        }
        probe(s, u, "the first chunk", [308]) {
            try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 0-999/\(Self.max18)"], body: randomBytes(1000))
        }
        for id in ids { probe(s, u, "abort", [204]) { try u.send("DELETE", "/v1/upload/\(id)") } }
    }

    func testNumbersInQueriesAndHeaders() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let file = try u.upload("ten", Array(0..<10))
        let fileId = file["id"] as! String, rid = file["headRevisionId"] as! String
        let junk = [Self.max, Self.min, "-1", Self.past, Self.u64max, Self.huge, "%2B1", "1.5", "1e3", "0x10", "%201", "%D9%A1"]

        for v in ["0", "5001"] + junk { probe(s, u, "pageSize=\(v)", [400]) { try u.send("GET", "/v1/files?pageSize=\(v)") } }
        for v in ["1", "1000"] { probe(s, u, "pageSize=\(v)", [200]) { try u.send("GET", "/v1/files?pageSize=\(v)") } }
        for v in junk + ["1000000000000000000"] {
            probe(s, u, "changes cursor=\(v)", [400]) { try u.send("GET", "/v1/changes?cursor=\(v)") }
            probe(s, u, "events cursor=\(v)", [400]) { try u.send("GET", "/v1/events?cursor=\(v)") }
        }
        for v in ["0", Self.max18] { probe(s, u, "changes cursor=\(v)", [200]) { try u.send("GET", "/v1/changes?cursor=\(v)") } }
        for v in ["0", "10001"] + junk {
            probe(s, u, "changes limit=\(v)", [400]) { try u.send("GET", "/v1/changes?cursor=0&limit=\(v)") }
        }
        for v in [Self.max, Self.min, "-1", Self.past, Self.u64max, "+1", "1.5", "x"] {
            probe(s, u, "Last-Event-ID \(v)", [400]) { try u.send("GET", "/v1/events", headers: ["Last-Event-ID": v]) }
        }

        // Versions: well-formed but stale → 412; anything else → 400.
        let ifMatch: [(String, Set<Int>)] = [
            (Self.max, [400]), ("\"\(Self.max)\"", [400]), ("\"999999999999999999\"", [412]), ("W/\"5\"", [412]),
            ("\"0\"", [400]), ("\"-1\"", [400]), ("\"\(Self.min)\"", [400]), ("\"\(Self.past)\"", [400]), ("W/5", [400]),
            ("\"5", [400]), ("5\"", [400]), ("\"\"", [400]), ("*", [400]), ("\"05\"", [400]), ("\"+5\"", [400]),
        ]
        for (v, expected) in ifMatch {
            probe(s, u, "PATCH If-Match \(v)", expected) {
                try u.send("PATCH", "/v1/files/\(fileId)", headers: ["If-Match": v, "Content-Type": "application/json"], body: Array("{}".utf8))
            }
            probe(s, u, "DELETE If-Match \(v)", expected) { try u.send("DELETE", "/v1/files/\(fileId)", headers: ["If-Match": v]) }
            probe(s, u, "restore If-Match \(v)", expected) {
                try u.send("POST", "/v1/files/\(fileId)/revisions/\(rid)/restore", headers: ["If-Match": v])
            }
            probe(s, u, "media upload If-Match \(v)", expected) {
                try u.send("POST", "/v1/upload?uploadType=media&fileId=\(fileId)", headers: ["If-Match": v], body: [1])
            }
        }

        // Ranges: positions past Int64.max are "past any file", never an overflow.
        let ranges: [(String, Int)] = [
            ("bytes=\(Self.max)-", 416), ("bytes=\(Self.past)-", 416), ("bytes=\(Self.maxMinus1)-\(Self.max)", 416),
            ("bytes=0-\(Self.max)", 206), ("bytes=0-\(Self.past)", 206), ("bytes=-\(Self.max)", 206),
            ("bytes=-\(Self.past)", 206), ("bytes=-\(Self.huge)", 206), ("bytes=-0", 416), ("bytes=9-9", 206),
            ("bytes=\(Self.min)-", 200), ("bytes=5-1", 200), ("bytes=--1", 200), ("bytes=0-1,3-4", 200),
        ]
        for (v, expected) in ranges {
            for path in ["/v1/files/\(fileId)/content", "/v1/files/\(fileId)/revisions/\(rid)/content"] {
                probe(s, u, "\(path) Range \(v)", [expected]) { try u.send("GET", path, headers: ["Range": v]) }
            }
        }

        // Content-Range and Content-Length of a chunk of a 1500-byte session.
        let id = try u.startSession(name: "c", bytes: randomBytes(1500)).json["uploadId"] as! String
        let contentRanges: [(String, Set<Int>)] = [
            ("bytes 0-\(Self.max)/1500", [400]), ("bytes \(Self.max)-\(Self.max)/1500", [400]),
            ("bytes \(Self.maxMinus1)-\(Self.max)/*", [400]), ("bytes 0-999/\(Self.max)", [400]), ("bytes */\(Self.max)", [400]),
            ("bytes 0-\(Self.max18)/1500", [416]), ("bytes \(Self.max18)-\(Self.max18)/*", [416]),
            ("bytes \(Self.past)-\(Self.past)/1500", [400]), ("bytes 0-\(Self.past)/1500", [400]), ("bytes -1-999/1500", [400]),
            ("bytes 0-999/-1", [400]), ("bytes 0-999/\(Self.min)", [400]), ("bytes +0-999/1500", [400]), ("bytes */*", [400]),
            ("bytes 0-999/1500 ", [308]), ("bytes  0-999/1500", [400]),
        ]
        for (v, expected) in contentRanges {
            probe(s, u, "Content-Range \(v)", expected) {
                try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": v], body: randomBytes(1000))
            }
        }
        for length in [Self.max, Self.past, Self.u64max, "-1"] {
            probe(s, u, "chunk Content-Length \(length)", Set(400...499)) {
                try u.server.client.sendRaw(Array("PUT /v1/upload/\(id)/chunk HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(u.token)\r\nContent-Range: bytes 1000-1499/1500\r\nContent-Length: \(length)\r\n\r\n".utf8) + randomBytes(500))
            }
            probe(s, u, "media Content-Length \(length)", Set(400...499)) {
                try u.server.client.sendRaw(Array("POST /v1/upload?uploadType=media&name=cl HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(u.token)\r\nContent-Length: \(length)\r\n\r\n".utf8) + randomBytes(500))
            }
        }
    }

    func testFaultSettingsOutsideTheirBoundsAreRefused() throws {
        let s = try ServerProcess(args: ["--test-faults"])
        let u = try APIUser(s, "alice")
        let set = { (json: String) throws -> TestResponse in try s.client.send("POST", "/v1/test/faults", body: Array(json.utf8)) }
        XCTAssertEqual(try set(#"{"retryAfterSeconds":2}"#).status, 200)
        // The reported reproduction: a negative status, then any request.
        probe(s, u, "errorRate 1 with errorStatus -1", [400]) { try set(#"{"errorRate":1,"errorStatus":-1}"#) }
        let bad: [String: [String]] = [
            "dropAfterBytes": ["-1", Self.min, Self.past, "1.5"],
            "dropCount": ["0", "-1", "1000001", Self.max, Self.past],
            "delayMs": ["-1", "60001", Self.max, Self.min],
            "errorRate": ["-0.1", "1.1", "1e308", "-1e308"],
            "errorStatus": ["-1", "0", "99", "399", "600", "1000", Self.max, Self.min, Self.past],
            "retryAfter429Count": ["-1", "1000001", Self.max],
            "retryAfterSeconds": ["-1", "86401", Self.max, Self.min],
            "extraContentBytes": ["-1", String((Int64(1) << 40) + 1), Self.max, Self.min],
        ]
        for (field, values) in bad.sorted(by: { $0.key < $1.key }) {
            for v in values + ["null", #""1""#] {
                probe(s, u, "\(field): \(v)", [400]) { try set(#"{"\#(field)":\#(v)}"#) }
            }
        }
        XCTAssertEqual(try s.client.send("GET", "/v1/test/faults").text, #"{"retryAfterSeconds":2}"#, "a refused setting changes nothing")
        // The bounds themselves are accepted and work.
        XCTAssertEqual(try set(#"{"errorRate":1,"errorStatus":599}"#).status, 200)
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 599)
        XCTAssertEqual(try set(#"{"errorRate":1,"errorStatus":400,"delayMs":0,"dropAfterBytes":0,"dropCount":1000000}"#).status, 200)
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 400)
        XCTAssertEqual(try set(#"{"extraContentBytes":1099511627776,"retryAfterSeconds":86400,"retryAfter429Count":0}"#).status, 200)
        XCTAssertEqual(try set("{}").status, 200)
        s.assertStillServing(u, "clearing the faults")
    }
}
