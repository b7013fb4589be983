import XCTest

/// Simple, multipart and resumable uploads with their error cases.
final class UploadTests: XCTestCase {
    func testSimpleUploadAndChecksum() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(5000)
        let r = try u.send("POST", "/v1/upload?uploadType=media&name=a.bin&sha256=\(sha256Hex(bytes))",
                           headers: ["Content-Type": "image/png"], body: bytes)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(r.json["mimeType"] as? String, "image/png")
        XCTAssertEqual(r.json["size"] as? Int, 5000)
        let bad = try u.send("POST", "/v1/upload?uploadType=media&name=b.bin&sha256=\(String(repeating: "0", count: 64))", body: bytes)
        XCTAssertEqual(bad.status, 422)
        let list = try u.send("GET", "/v1/files").json["files"] as! [[String: Any]]
        XCTAssertEqual(list.compactMap { $0["name"] as? String }, ["a.bin"], "nothing published on mismatch")
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&name=a.bin", body: bytes).status, 409)
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&name=..", body: bytes).status, 400)
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=bogus", body: bytes).status, 400)
        // New revision of an existing file needs If-Match.
        let id = r.json["id"] as! String
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&fileId=\(id)", body: bytes).status, 428)
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&fileId=\(id)", headers: ["If-Match": "\"5\""], body: bytes).status, 412)
        let v2 = try u.send("POST", "/v1/upload?uploadType=media&fileId=\(id)", headers: ["If-Match": "\"1\""], body: Array("new".utf8))
        XCTAssertEqual(v2.status, 201)
        XCTAssertEqual(v2.json["version"] as? Int, 2)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(id)/content").text, "new")
        XCTAssertEqual(s.tempFiles, [], "no temp files left")
    }

    func testMultipartUpload() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        let content = randomBytes(70_000) + Array("\r\n--notquite".utf8) + randomBytes(100)
        let boundary = "b0undary42"
        var body = Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n{\"name\":\"m.bin\",\"mimeType\":\"text/x-test\"}\r\n--\(boundary)\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
        body += content + Array("\r\n--\(boundary)--\r\n".utf8)
        let r = try u.send("POST", "/v1/upload?uploadType=multipart",
                           headers: ["Content-Type": "multipart/related; boundary=\(boundary)"], body: body)
        XCTAssertEqual(r.status, 201, r.text)
        XCTAssertEqual(r.json["sha256"] as? String, sha256Hex(content))
        XCTAssertEqual(r.json["mimeType"] as? String, "text/x-test")
        let truncated = Array(body.prefix(body.count - 20))
        let bad = try u.send("POST", "/v1/upload?uploadType=multipart",
                             headers: ["Content-Type": "multipart/related; boundary=\(boundary)"], body: truncated)
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.errorCode, "invalid_multipart")
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=multipart", body: body).status, 400)
    }

    func testResumableOutOfOrderRepeatedAndStatus() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(4500)
        let start = try u.startSession(name: "r.bin", bytes: bytes, requestId: "req-1")
        XCTAssertEqual(start.status, 201)
        let id = try XCTUnwrap(start.json["uploadId"] as? String)
        XCTAssertEqual(start.json["totalChunks"] as? Int, 5)
        XCTAssertEqual(start.json["chunkSize"] as? Int, 1000)
        XCTAssertEqual(start.json["uploadUrl"] as? String, "/v1/upload/\(id)/chunk")
        XCTAssertNotNil(start.json["uploadExpiresAt"] as? String)
        let again = try u.startSession(name: "r.bin", bytes: bytes, requestId: "req-1")
        XCTAssertEqual(again.json["uploadId"] as? String, id, "same requestId, same session")

        var r = try u.putChunk(id, bytes, 3000, 4000)
        XCTAssertEqual(r.status, 308)
        XCTAssertEqual(r.header("Range"), "bytes=3000-3999")
        r = try u.putChunk(id, bytes, 0, 1000)
        XCTAssertEqual(r.header("Range"), "bytes=0-999,3000-3999")
        r = try u.putChunk(id, bytes, 0, 1000)
        XCTAssertEqual(r.status, 308, "a repeated chunk is harmless")
        // Errors: misaligned, wrong size, out of bounds, wrong total, missing header.
        XCTAssertEqual(try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 500-1499/4500"], body: Array(bytes[500..<1500])).errorCode, "misaligned_chunk")
        XCTAssertEqual(try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 1000-1499/4500"], body: Array(bytes[1000..<1500])).errorCode, "wrong_chunk_size")
        XCTAssertEqual(try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 4000-4999/4500"], body: randomBytes(1000)).status, 416)
        XCTAssertEqual(try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 1000-1999/9999"], body: randomBytes(1000)).status, 400)
        XCTAssertEqual(try u.send("PUT", "/v1/upload/\(id)/chunk", body: randomBytes(10)).errorCode, "invalid_content_range")
        XCTAssertEqual(try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes 1000-1999/4500", "Content-Length": "900"], body: randomBytes(900)).status, 400)

        let status = try u.send("GET", "/v1/upload/\(id)")
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(status.json["chunksProcessed"] as? Int, 2)
        XCTAssertEqual((status.json["receivedRanges"] as? [[String: Int]])?.count, 2)
        XCTAssertEqual(status.json["bytesReceivedTotal"] as? Int, 3000, "re-sent bytes are counted")
        XCTAssertEqual(status.json["state"] as? String, "active")

        XCTAssertEqual(try u.putChunk(id, bytes, 4000, 4500).status, 308)
        XCTAssertEqual(try u.putChunk(id, bytes, 2000, 3000).status, 308)
        XCTAssertTrue((try u.send("GET", "/v1/files").json["files"] as! [Any]).isEmpty, "nothing visible before the last chunk")
        let done = try u.putChunk(id, bytes, 1000, 2000)
        XCTAssertEqual(done.status, 201)
        let fileId = try XCTUnwrap(done.json["id"] as? String)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(fileId)/content").body, bytes)
        XCTAssertEqual(try u.putChunk(id, bytes, 0, 1000).status, 201, "after completion a chunk re-sent answers the file")
        let after = try u.send("GET", "/v1/upload/\(id)")
        XCTAssertEqual(after.json["state"] as? String, "complete")
        XCTAssertEqual((after.json["file"] as? [String: Any])?["id"] as? String, fileId)
        XCTAssertEqual(try u.send("GET", "/v1/upload/nope").status, 404)
    }

    func testResumableChecksumMismatchPublishesNothing() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(1500)
        let id = try u.startSession(name: "bad.bin", bytes: bytes, sha: sha256Hex(randomBytes(3))).json["uploadId"] as! String
        _ = try u.putChunk(id, bytes, 0, 1000)
        let r = try u.putChunk(id, bytes, 1000, 1500)
        XCTAssertEqual(r.status, 422)
        XCTAssertEqual(r.errorCode, "checksum_mismatch")
        XCTAssertTrue((try u.send("GET", "/v1/files").json["files"] as! [Any]).isEmpty)
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(id)").status, 404)
        XCTAssertEqual(try s.storedRevisionCount(), 0)
        XCTAssertEqual(try u.startSession(name: "x", bytes: bytes, sha: "zz").status, 400)
        XCTAssertEqual(try u.json("POST", "/v1/upload?uploadType=resumable", ["name": "x"]).status, 400)
    }

    func testResumableNewRevisionAbortAndEmptyFile() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let f = try u.upload("doc", Array("one".utf8))
        let id = f["id"] as! String
        XCTAssertEqual(try u.startSession(name: "", bytes: [1], fileId: id, baseVersion: 7).status, 412)
        let bytes = randomBytes(2500)
        let sid = try u.startSession(name: "", bytes: bytes, fileId: id, baseVersion: 1).json["uploadId"] as! String
        let r = try u.putAll(sid, bytes, chunkSize: 1000, order: [2, 1, 0])
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(r.json["version"] as? Int, 2)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(id)/content").body, bytes)

        let doomed = try u.startSession(name: "abort.bin", bytes: bytes).json["uploadId"] as! String
        _ = try u.putChunk(doomed, bytes, 0, 1000)
        XCTAssertTrue(try s.hasUploadData(doomed))
        XCTAssertEqual(try u.send("DELETE", "/v1/upload/\(doomed)").status, 204)
        XCTAssertFalse(try s.hasUploadData(doomed))
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(doomed)").status, 404)
        XCTAssertEqual(try u.putChunk(doomed, bytes, 1000, 2000).status, 404)
        XCTAssertEqual(try u.send("DELETE", "/v1/upload/\(doomed)").status, 404)

        let empty = try u.startSession(name: "empty", bytes: [])
        XCTAssertEqual(empty.json["totalChunks"] as? Int, 1)
        let e = try u.send("PUT", "/v1/upload/\(empty.json["uploadId"] as! String)/chunk", headers: ["Content-Range": "bytes */0"])
        XCTAssertEqual(e.status, 201)
        XCTAssertEqual(e.json["size"] as? Int, 0)
    }

    func testParallelChunksOfOneSession() throws {
        let s = try ServerProcess(args: ["--max-chunk", "65536"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(65536 * 12 + 123)
        let id = try u.startSession(name: "p.bin", bytes: bytes).json["uploadId"] as! String
        let statuses = Locked([Int]())
        runConcurrently(13) { i in
            let r = try? u.putChunk(id, bytes, i * 65536, min(bytes.count, (i + 1) * 65536))
            statuses.withLock { $0.append(r?.status ?? -1) }
        }
        let all = statuses.withLock { $0 }
        XCTAssertEqual(all.filter { $0 == 201 }.count, 1, "\(all)")
        XCTAssertEqual(all.filter { $0 == 308 }.count, 12, "\(all)")
        let file = (try u.send("GET", "/v1/files").json["files"] as! [[String: Any]]).first!
        XCTAssertEqual(file["sha256"] as? String, sha256Hex(bytes))
    }
}

/// A tiny lock box for test threads.
final class Locked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ v: T) { value = v }
    func withLock<R>(_ body: (inout T) -> R) -> R { lock.lock(); defer { lock.unlock() }; return body(&value) }
}
