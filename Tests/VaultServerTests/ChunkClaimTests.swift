import VaultTestSupport
import XCTest
@testable import VaultServer
#if canImport(Glibc)
import Glibc
#endif

/// Chunk claims (issue 9, item 14): a killed client's claim does not lock its own resumed
/// upload out; a stalled writer is superseded and can write, keep or record nothing afterwards;
/// a duplicate of a chunk that was recorded (and hashed) while it waited never writes.
final class ChunkClaimTests: XCTestCase {
    /// A clock the test moves by hand.
    final class TestClock: @unchecked Sendable {
        // SAFETY: `time` is only touched inside `lock`.
        private let lock = NSLock()
        private var time = Date(timeIntervalSince1970: 1_000)
        var now: Date { lock.lock(); defer { lock.unlock() }; return time }
        func advance(_ seconds: TimeInterval) { lock.lock(); time += seconds; lock.unlock() }
    }

    func testStalledClaimIsTakenOverAndTheOldTicketCanDoNothing() {
        let clock = TestClock()
        let claims = ChunkClaims(stallAfter: 10, graceWait: 0, now: { clock.now })
        guard case .claimed(let a, tookOver: false) = claims.acquire("u#0") else { return XCTFail("free chunk") }
        guard case .busy(let retryAfter) = claims.acquire("u#0") else { return XCTFail("held chunk") }
        XCTAssertEqual(retryAfter, 10)
        if case .claimed = claims.acquire("u#1") {} else { XCTFail("another chunk is free") }
        clock.advance(9)
        XCTAssertEqual(claims.whileOwned(a) { 1 }, 1, "a write counts as progress")
        clock.advance(9.9)
        guard case .busy = claims.acquire("u#0") else { return XCTFail("progress 9.9 s ago is not a stall") }
        clock.advance(0.1)
        guard case .claimed(let b, tookOver: true) = claims.acquire("u#0") else { return XCTFail("stalled for 10 s") }
        XCTAssertNil(claims.whileOwned(a) { XCTFail("the superseded ticket ran a write") }, "the old writer is refused")
        claims.release(a)
        guard case .busy = claims.acquire("u#0") else { return XCTFail("the old ticket's release must not free the new claim") }
        XCTAssertEqual(claims.whileOwned(b) { 2 }, 2)
        claims.release(b)
        guard case .claimed(_, tookOver: false) = claims.acquire("u#0") else { return XCTFail("released") }
    }

    func testWaiterGetsTheChunkAsSoonAsTheHolderReleasesIt() throws {
        let claims = ChunkClaims(stallAfter: 600, graceWait: 600)
        guard case .claimed(let a, _) = claims.acquire("u#0") else { return XCTFail("free chunk") }
        let outcome = Locked<ChunkClaims.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread { outcome.withLock { $0 = claims.acquire("u#0") }; done.signal() }.start()
        try waitUntil("the second request waits") { claims.waitingCount == 1 }
        claims.release(a)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        guard case .claimed(_, tookOver: false)? = outcome.withLock({ $0 }) else { return XCTFail("the waiter gets the chunk") }
    }

    /// B asks for chunk 0 while A is writing it; A records it (the hash now covers it) and
    /// releases; B, holding the claim at last, must see that the chunk is recorded and write
    /// nothing: its different bytes would otherwise replace bytes already hashed.
    func testDuplicateChunkThatWaitedNeverWritesAfterTheChunkWasHashed() throws {
        let bytes = randomBytes(1500), other = randomBytes(1000)
        let upload = try InProcessUpload(bytes, stallTimeout: 600)
        defer { upload.remove() }
        let service = upload.service, chunk = upload.chunk
        let a = try chunk(0, 1000)
        try bytes[0..<1000].withUnsafeBytes { try a.receive($0) }
        let answerB = Locked<HTTPResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        let makeChunk = Unchecked(chunk)
        Thread {
            let response = VaultService.answer {
                let b = try makeChunk.value(0, 1000)
                try other.withUnsafeBytes { try b.receive($0) }
                return b.finish()
            }
            answerB.withLock { $0 = response }
            done.signal()
        }.start()
        try waitUntil("B waits for A's claim") { service.chunkClaims.waitingCount == 1 }
        XCTAssertEqual(a.finish().status, 308)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(answerB.withLock { $0?.status }, 308, "B is answered as a repeat")
        let last = try chunk(1000, 1500)
        try bytes[1000..<1500].withUnsafeBytes { try last.receive($0) }
        let published = last.finish()
        XCTAssertEqual(published.status, 201, String(decoding: body(published), as: UTF8.self))
        let rid = try json(published)["headRevisionId"] as! String
        let stored = try service.content.open(revision: rid, size: Int64(bytes.count)).readAll(size: Int64(bytes.count))
        XCTAssertEqual(stored, bytes, "the published bytes are the ones that were hashed")
    }

    /// A request whose whole body arrived but that ended without an answer (the client went
    /// away first) still records its chunk: the last one publishes the file, instead of leaving a
    /// session whose ranges are complete and that nothing could ever finish.
    func testAWholeBodyWhoseAnswerWasLostIsRecorded() throws {
        let bytes = randomBytes(1500)
        let upload = try InProcessUpload(bytes)
        defer { upload.remove() }
        let service = upload.service, chunk = upload.chunk, id = upload.id
        let first = try chunk(0, 1000)
        try bytes[0..<1000].withUnsafeBytes { try first.receive($0) }
        first.abort()
        let cut = try chunk(1000, 1500)
        try bytes[1000..<1200].withUnsafeBytes { try cut.receive($0) }
        cut.abort()
        let last = try chunk(1200, 1500)
        try bytes[1200..<1500].withUnsafeBytes { try last.receive($0) }
        last.abort()
        guard case .respond(let answer) = try service.uploadStatus(upload.context("GET", "/v1/upload/\(id)", params: ["id": id])) else {
            return XCTFail("plan")
        }
        let status = try json(answer)
        XCTAssertEqual(status["state"] as? String, "complete", String(decoding: body(answer), as: UTF8.self))
        let rid = try XCTUnwrap((status["file"] as? [String: Any])?["headRevisionId"] as? String)
        let stored = try service.content.open(revision: rid, size: Int64(bytes.count)).readAll(size: Int64(bytes.count))
        XCTAssertEqual(stored, bytes)
    }

    /// A client killed mid-chunk (its connection reset or closed) and resumed at once, over and
    /// over: never a 409, and the file is right.
    func testClientKilledMidChunkResumesAtOnceWithoutConflicts() throws {
        let s = try ServerProcess(args: ["--max-chunk", "100000"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(250_000)
        let id = try u.startSession(name: "k.bin", bytes: bytes).json["uploadId"] as! String
        var last: TestResponse?
        for round in 0..<9 {
            let index = round / 3, chunkStart = index * 100_000, chunkEnd = min(250_000, chunkStart + 100_000)
            let from = try resumePoint(u, id, chunkStart: chunkStart, chunkEnd: chunkEnd)
            if round % 3 < 2 {
                // Killed: part of the body, then a reset (odd) or a plain close (even).
                let fd = try s.client.connect(timeout: 10)
                let head = "PUT /v1/upload/\(id)/chunk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(u.token)\r\nContent-Range: bytes \(from)-\(chunkEnd - 1)/250000\r\nContent-Length: \(chunkEnd - from)\r\n\r\n"
                try s.client.writeAll(fd, Array(head.utf8) + Array(bytes[from..<(from + (chunkEnd - from) / 3)]))
                if round % 2 == 1 {
                    var linger = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                }
                close(fd)
                continue
            }
            // Resumed at once, from what the server says it kept.
            last = try u.send("PUT", "/v1/upload/\(id)/chunk", headers: ["Content-Range": "bytes \(from)-\(chunkEnd - 1)/250000"],
                              body: Array(bytes[from..<chunkEnd]))
            XCTAssertNotEqual(last?.status, 409, "round \(round): \(last?.text ?? "")")
            XCTAssertTrue([308, 201].contains(last?.status ?? 0), "round \(round): \(last?.status ?? 0) \(last?.text ?? "")")
        }
        XCTAssertEqual(last?.status, 201)
        XCTAssertEqual(last?.json["sha256"] as? String, sha256Hex(bytes))
    }

    /// A writer that stops sending (its connection dead without the server knowing) is
    /// superseded by the resumed request once it made no progress for `--chunk-stall`; the old
    /// connection, sending again, gets 409 and its bytes change nothing.
    func testStalledWriterIsSupersededAndCanWriteNothingAfterwards() throws {
        let s = try ServerProcess(args: ["--max-chunk", "100000", "--chunk-stall", "1"])
        let u = try APIUser(s, "alice")
        var tookOver = false
        // The stalled request must reach the server first; when the resumed one overtakes it
        // (two threads racing), the stalled one is a mere repeat and the round is run again.
        for attempt in 0..<5 where !tookOver {
            let bytes = randomBytes(200_000)
            let id = try u.startSession(name: "s\(attempt).bin", bytes: bytes).json["uploadId"] as! String
            let fd = try s.client.connect(timeout: 30)
            defer { close(fd) }
            let head = "PUT /v1/upload/\(id)/chunk HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(u.token)\r\nContent-Range: bytes 0-99999/200000\r\nContent-Length: 100000\r\n\r\n"
            try s.client.writeAll(fd, Array(head.utf8) + Array(bytes[0..<30_000]))
            let resumed = try u.putChunk(id, bytes, 0, 100_000)
            XCTAssertEqual(resumed.status, 308, "the resumed request is never refused: \(resumed.text)")
            // The old writer wakes up and sends the rest, wrong bytes at that.
            try? s.client.writeAll(fd, Array(repeating: 0xee, count: 70_000))
            let old = try? HTTPTestClient.parse(s.client.readAll(fd, deadline: Date().addingTimeInterval(30)))
            if old?.status == 409 {
                XCTAssertEqual(old?.errorCode, "chunk_superseded")
                tookOver = true
            } else {
                XCTAssertEqual(old?.status, 308, "overtaken: the stalled request was a repeat: \(old?.text ?? "")")
            }
            let done = try u.putChunk(id, bytes, 100_000, 200_000)
            XCTAssertEqual(done.status, 201, done.text)
            XCTAssertEqual(try u.send("GET", "/v1/files/\(done.json["id"] as! String)/content").body, bytes,
                           "the superseded writer's bytes are not in the file")
        }
        XCTAssertTrue(tookOver, "a stalled writer was taken over")
    }

    // MARK: - Helpers

    /// Hands a value to another thread in a test where the hand-over is ordered by hand.
    struct Unchecked<T>: @unchecked Sendable {
        // SAFETY: the test's semaphores order every use.
        let value: T
        init(_ value: T) { self.value = value }
    }

    /// Where to continue a chunk: after the prefix the server kept of it, else its start.
    private func resumePoint(_ u: APIUser, _ id: String, chunkStart: Int, chunkEnd: Int) throws -> Int {
        let ranges = (try u.send("GET", "/v1/upload/\(id)").json["receivedRanges"] as? [[String: Any]]) ?? []
        for r in ranges {
            let start = r["start"] as! Int, end = r["end"] as! Int
            if start <= chunkStart && end >= chunkStart && end + 1 < chunkEnd { return end + 1 }
        }
        return chunkStart
    }

    private func body(_ r: HTTPResponse) -> [UInt8] {
        if case .bytes(let b) = r.body { return b }
        return []
    }

    private func json(_ r: HTTPResponse) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body(r))) as? [String: Any])
    }
}

/// A `VaultService` in this process (chunks of 1,000 bytes) with one user and an upload session
/// for `bytes`; `chunk` hands out the sink of a `PUT` of bytes `start..<end`.
private struct InProcessUpload {
    let service: VaultService
    let owner: String
    let id: String
    let size: Int
    let dataDir: String

    init(_ bytes: [UInt8], stallTimeout: Int? = nil) throws {
        Sodium.initialize()
        var config = ServerConfig()
        config.dataDir = NSTemporaryDirectory() + "vault-claims-" + UUID().uuidString
        config.chunkSize = 1000
        if let stallTimeout { config.chunkStallTimeout = stallTimeout }
        dataDir = config.dataDir
        service = try VaultService(config: config)
        owner = try service.users.add(name: "alice", password: Array("pw".utf8))
        let ctx = RequestContext(request: HTTPRequest(method: "POST", path: "/v1/upload", query: [:], headers: [:]), userId: owner)
        guard case .buffer(_, let open) = try service.createUploadSession(ctx) else { throw TestHTTPError(description: "no buffered plan") }
        let opened = try open(Array(#"{"name":"f","size":\#(bytes.count),"sha256":"\#(sha256Hex(bytes))","requestId":"r"}"#.utf8))
        guard case .bytes(let body) = opened.body, let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let id = object["uploadId"] as? String else { throw TestHTTPError(description: "no upload id") }
        self.id = id
        size = bytes.count
    }

    func context(_ method: String, _ path: String, params: [String: String] = [:], headers: [String: String] = [:]) -> RequestContext {
        var r = HTTPRequest(method: method, path: path, query: [:], headers: headers)
        r.pathParams = params
        return RequestContext(request: r, userId: owner)
    }

    func chunk(_ start: Int, _ end: Int) throws -> ChunkSink {
        guard case .stream(let sink) = try service.putChunk(context("PUT", "/v1/upload/\(id)/chunk", params: ["id": id],
                                                                    headers: ["content-range": "bytes \(start)-\(end - 1)/\(size)"])),
              let chunk = sink as? ChunkSink else { throw TestHTTPError(description: "no chunk sink") }
        return chunk
    }

    func remove() { try? FileManager.default.removeItem(atPath: dataDir) }
}
