import VaultTestSupport
import XCTest

/// Test-only fault switches: refused without `--test-faults`, effective with it.
final class FaultTests: XCTestCase {
    func testRefusedWithoutFlag() throws {
        let s = try ServerProcess()
        XCTAssertEqual(try s.client.send("GET", "/v1/test/faults").status, 404)
        XCTAssertEqual(try s.client.send("POST", "/v1/test/faults", body: Array(#"{"errorRate":1}"#.utf8)).status, 404)
        let u = try APIUser(s, "alice")
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 200)
    }

    func testInjectedErrorsDelaysAnd429() throws {
        let s = try ServerProcess(args: ["--test-faults"])
        let u = try APIUser(s, "alice")
        let set = { (json: String) throws -> TestResponse in try s.client.send("POST", "/v1/test/faults", body: Array(json.utf8)) }
        XCTAssertEqual(try set(#"{"retryAfter429Count":2,"retryAfterSeconds":3}"#).status, 200)
        let r1 = try u.send("GET", "/v1/files")
        XCTAssertEqual(r1.status, 429)
        XCTAssertEqual(r1.header("Retry-After"), "3")
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 429)
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 200)

        _ = try set(#"{"errorRate":1,"errorStatus":502}"#)
        XCTAssertEqual(try s.client.send("GET", "/v1/test/faults").json["errorStatus"] as? Int, 502)
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 502)
        _ = try set(#"{"delayMs":300}"#)
        let t0 = Date()
        XCTAssertEqual(try u.send("GET", "/v1/files").status, 200)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(t0), 0.29)
        _ = try set("{}")
        XCTAssertEqual(try s.client.send("GET", "/v1/test/faults").text, "{}")
    }

    /// With `errorSeed`, the same setting injects its errors into the same requests again.
    func testASeededErrorRateRepeatsItsFaults() throws {
        let s = try ServerProcess(args: ["--test-faults"])
        let u = try APIUser(s, "alice")
        let seed = TestSeed.make(self.name)
        func run() throws -> [Int] {
            XCTAssertEqual(try s.client.send("POST", "/v1/test/faults", body: Array(#"{"errorRate":0.5,"errorSeed":\#(seed)}"#.utf8)).status, 200)
            return try (0..<24).map { _ in try u.send("GET", "/v1/files").status }
        }
        let first = try run()
        XCTAssertEqual(try run(), first)
        XCTAssertEqual(Set(first).subtracting([200, 503]), [], "\(first)")
    }

    func testDropAfterBytesAndExpireSessions() throws {
        let s = try ServerProcess(args: ["--test-faults", "--max-chunk", "4000"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(6000)
        let id = try u.startSession(name: "d.bin", bytes: bytes).json["uploadId"] as! String
        _ = try s.client.send("POST", "/v1/test/faults", body: Array(#"{"dropAfterBytes":1500}"#.utf8))
        XCTAssertThrowsError(try u.putChunk(id, bytes, 0, 4000), "the connection is cut mid-body")
        try waitUntil("the server to keep the cut body's prefix") {
            (try u.send("GET", "/v1/upload/\(id)").json["bytesReceivedTotal"] as? Int ?? 0) > 0
        }
        let st = try u.send("GET", "/v1/upload/\(id)")
        XCTAssertEqual(st.json["chunksProcessed"] as? Int, 0)
        XCTAssertEqual(st.json["bytesReceivedTotal"] as? Int, 1500)
        XCTAssertEqual(try u.putChunk(id, bytes, 0, 4000).status, 308, "one drop per setting")
        XCTAssertEqual(try u.putChunk(id, bytes, 4000, 6000).status, 201)
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(id)").json["bytesReceivedTotal"] as? Int, 7500)

        let id2 = try u.startSession(name: "e.bin", bytes: bytes).json["uploadId"] as! String
        _ = try s.client.send("POST", "/v1/test/faults", body: Array(#"{"expireSessionsNow":true}"#.utf8))
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(id2)").status, 404)
        XCTAssertEqual(try u.putChunk(id2, bytes, 0, 4000).status, 404)
    }

    /// A chunk whose body is cut off keeps its fsynced prefix: the status shows it, the client
    /// sends only the rest (never past what is kept), and over two cuts every byte arrives once.
    func testCutOffChunkKeepsItsPrefixSoOnlyTheRestIsResent() throws {
        let s = try ServerProcess(args: ["--test-faults", "--max-chunk", "4000"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(6000)
        let id = try u.startSession(name: "p.bin", bytes: bytes).json["uploadId"] as! String
        func ranges(_ id: String = id) throws -> [[Int]] {
            let st = try u.send("GET", "/v1/upload/\(id)").json
            return (st["receivedRanges"] as? [[String: Any]] ?? []).map { [$0["start"] as! Int, $0["end"] as! Int] }
        }
        /// Waits until the server has recorded the prefix of a cut chunk ending past `end`.
        func keptPast(_ end: Int, _ id: String = id) throws {
            try waitUntil("the server to keep the cut chunk's prefix past byte \(end)") { (try ranges(id).last?[1] ?? -1) > end }
        }
        _ = try s.client.send("POST", "/v1/test/faults", body: Array(#"{"dropAfterBytes":1500}"#.utf8))
        XCTAssertThrowsError(try u.putChunk(id, bytes, 0, 4000), "the connection is cut mid-body")
        try keptPast(-1)
        XCTAssertEqual(try ranges(), [[0, 1499]], "the received prefix is kept")
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(id)").json["chunksProcessed"] as? Int, 0)
        // Never past the kept prefix, never a short end.
        XCTAssertEqual(try u.putChunk(id, bytes, 2000, 4000).errorCode, "misaligned_chunk")
        XCTAssertEqual(try u.putChunk(id, bytes, 1500, 3000).errorCode, "wrong_chunk_size")
        // A second cut while continuing: the kept prefix grows.
        _ = try s.client.send("POST", "/v1/test/faults", body: Array(#"{"dropAfterBytes":500}"#.utf8))
        XCTAssertThrowsError(try u.putChunk(id, bytes, 1500, 4000))
        try keptPast(1499)
        XCTAssertEqual(try ranges(), [[0, 1999]])
        let r = try u.putChunk(id, bytes, 2000, 4000)
        XCTAssertEqual(r.status, 308)
        XCTAssertEqual(try ranges(), [[0, 3999]])
        let done = try u.putChunk(id, bytes, 4000, 6000)
        XCTAssertEqual(done.status, 201, done.text)
        XCTAssertEqual(done.json["sha256"] as? String, sha256Hex(bytes), "the pieces make the right file")
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(id)").json["bytesReceivedTotal"] as? Int, 6000, "each byte received once")
        // A whole chunk resent from its start is still accepted (older clients).
        let id2 = try u.startSession(name: "q.bin", bytes: bytes).json["uploadId"] as! String
        _ = try s.client.send("POST", "/v1/test/faults", body: Array(#"{"dropAfterBytes":1000}"#.utf8))
        XCTAssertThrowsError(try u.putChunk(id2, bytes, 0, 4000))
        try keptPast(-1, id2)
        XCTAssertEqual(try u.putChunk(id2, bytes, 0, 4000).status, 308)
        XCTAssertEqual(try u.putChunk(id2, bytes, 4000, 6000).status, 201)
    }
}
