import VaultTestSupport
import XCTest

/// Many clients at once, and `kill -9` in the middle of a chunk.
final class StressTests: XCTestCase {
    func testFiftyConcurrentClientsUploadCorrectly() throws {
        let s = try ServerProcess(args: ["--max-chunk", "65536", "--quiet"])
        let users = try (0..<5).map { i -> APIUser in
            if i >= 2 { try s.addUser("user\(i)") }
            return try APIUser(s, ["alice", "bob", "user2", "user3", "user4"][i])
        }
        let failures = Locked([String]())
        let uploaded = Locked([(APIUser, String, String)]())
        runConcurrently(50) { i in
            let u = users[i % users.count]
            let bytes = randomBytes(50_000 + i * 3_001)
            let sha = sha256Hex(bytes)
            do {
                let r: TestResponse
                if i % 3 == 0 {
                    r = try u.send("POST", "/v1/upload?uploadType=media&name=simple-\(i)", body: bytes)
                } else {
                    let start = try u.startSession(name: "resumable-\(i)", bytes: bytes, sha: sha)
                    guard let id = start.json["uploadId"] as? String else { throw TestHTTPError(description: start.text) }
                    let n = (bytes.count + 65535) / 65536
                    r = try u.putAll(id, bytes, chunkSize: 65536, order: Array((0..<n).reversed()))
                }
                guard r.status == 201, let fid = r.json["id"] as? String else {
                    throw TestHTTPError(description: "client \(i): \(r.status) \(r.text)")
                }
                uploaded.withLock { $0.append((u, fid, sha)) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        let all = uploaded.withLock { $0 }
        XCTAssertEqual(all.count, 50)
        for (u, fid, sha) in all {
            let meta = try u.send("GET", "/v1/files/\(fid)")
            XCTAssertEqual(meta.json["sha256"] as? String, sha)
            XCTAssertEqual(sha256Hex(try u.send("GET", "/v1/files/\(fid)/content").body), sha)
        }
    }

    func testKill9MidChunkThenResume() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1048576"])
        let u = try APIUser(s, "alice")
        let size = 3 * 1_048_576 + 100
        let bytes = randomBytes(size)
        let id = try u.startSession(name: "crash.bin", bytes: bytes).json["uploadId"] as! String
        XCTAssertEqual(try u.putChunk(id, bytes, 0, 1_048_576).status, 308)

        // Half of chunk 1 and half of a one-shot upload are in flight when the server dies.
        let c = s.client
        let chunkFD = try c.connect()
        defer { close(chunkFD) }
        try c.writeAll(chunkFD, c.requestHead("PUT", "/v1/upload/\(id)/chunk", headers: [
            "Authorization": "Bearer \(u.token)", "Content-Range": "bytes 1048576-2097151/\(size)",
        ], bodyLength: 1_048_576) + Array(bytes[1_048_576..<1_600_000]))
        let simpleFD = try c.connect()
        defer { close(simpleFD) }
        try c.writeAll(simpleFD, c.requestHead("POST", "/v1/upload?uploadType=media&name=half.bin", headers: [
            "Authorization": "Bearer \(u.token)",
        ], bodyLength: 500_000) + randomBytes(200_000))
        // Both bodies are being written when the server dies: part of chunk 1 in the session's
        // file, part of the one-shot upload in a temporary file.
        try XCTSkipIf(s.bucket != nil, "watches the data folder's part file (the S3 kill -9 case: S3ContentTests)")
        let tmp = s.dataDir + "/d/tmp"
        func sizeOf(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
        try waitUntil("both half bodies to reach the server's files") {
            sizeOf(s.dataDir + "/d/uploads/\(id).part") > 1_048_576
                && s.tempFiles.contains { sizeOf(tmp + "/" + $0) > 0 }
        }
        s.kill9()

        try s.start()
        let after = try APIUser(s, "alice")
        let status = try after.send("GET", "/v1/upload/\(id)")
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(status.json["chunksProcessed"] as? Int, 1, "the half chunk does not count")
        XCTAssertEqual((status.json["receivedRanges"] as? [[String: Int]])?.first?["end"], 1_048_575)
        XCTAssertTrue((try after.send("GET", "/v1/files").json["files"] as! [Any]).isEmpty, "nothing half-published")
        XCTAssertEqual(s.tempFiles, [])
        XCTAssertTrue(FileManager.default.enumerator(atPath: s.dataDir + "/d/content")?.allObjects.isEmpty ?? true)

        XCTAssertEqual(try after.putChunk(id, bytes, 2 * 1_048_576, 3 * 1_048_576).status, 308)
        XCTAssertEqual(try after.putChunk(id, bytes, 3 * 1_048_576, size).status, 308)
        let done = try after.putChunk(id, bytes, 1_048_576, 2 * 1_048_576)
        XCTAssertEqual(done.status, 201)
        let fid = try XCTUnwrap(done.json["id"] as? String)
        XCTAssertEqual(done.json["sha256"] as? String, sha256Hex(bytes))
        XCTAssertEqual(try after.send("GET", "/v1/files/\(fid)/content").body, bytes)
    }
}
