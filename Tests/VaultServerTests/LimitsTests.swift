import VaultTestSupport
import XCTest

/// Body and chunk caps, quota, open-session limit.
final class LimitsTests: XCTestCase {
    func testBodyCapQuotaAndSessionLimit() throws {
        let s = try ServerProcess(args: ["--max-body", "4000", "--quota", "10000", "--max-sessions", "2", "--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let big = try u.send("POST", "/v1/upload?uploadType=media&name=big", body: randomBytes(5000))
        XCTAssertEqual(big.status, 413)
        XCTAssertEqual(big.errorCode, "too_large")
        let huge = try u.send("POST", "/v1/upload?uploadType=media&name=huge", body: randomBytes(3 << 20))
        XCTAssertEqual(huge.status, 413, "refused before the body is read")
        XCTAssertEqual(try u.send("POST", "/v1/files", body: Array(repeating: 0x20, count: (1 << 20) + 10)).status, 413)

        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&name=a", body: randomBytes(4000)).status, 201)
        XCTAssertEqual(try u.send("POST", "/v1/upload?uploadType=media&name=b", body: randomBytes(4000)).status, 201)
        let over = try u.send("POST", "/v1/upload?uploadType=media&name=c", body: randomBytes(4000))
        XCTAssertEqual(over.status, 413)
        XCTAssertEqual(over.errorCode, "quota_exceeded")
        XCTAssertEqual(try u.startSession(name: "r", bytes: randomBytes(3000)).errorCode, "quota_exceeded")

        XCTAssertEqual(try u.startSession(name: "s1", bytes: randomBytes(10)).status, 201)
        XCTAssertEqual(try u.startSession(name: "s2", bytes: randomBytes(10)).status, 201)
        let third = try u.startSession(name: "s3", bytes: randomBytes(10))
        XCTAssertEqual(third.status, 429)
        XCTAssertNotNil(third.header("Retry-After").flatMap(Int.init))
        // The chunk cap is the fixed chunk size: a larger chunk is refused.
        let sid = try APIUser(s, "bob").startSession(name: "c", bytes: randomBytes(2500)).json["uploadId"] as! String
        let bob = try APIUser(s, "bob")
        XCTAssertEqual(try bob.send("PUT", "/v1/upload/\(sid)/chunk", headers: ["Content-Range": "bytes 0-1999/2500"], body: randomBytes(2000)).status, 400)
    }

    func testSweeperRemovesExpiredSessions() throws {
        let s = try ServerProcess(args: ["--upload-ttl", "1", "--sweep-interval", "1", "--max-chunk", "1000"])
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(1500)
        let id = try u.startSession(name: "x", bytes: bytes, requestId: "same").json["uploadId"] as! String
        XCTAssertEqual(try u.putChunk(id, bytes, 0, 1000).status, 308)
        XCTAssertTrue(try s.hasUploadData(id))
        try waitUntil("the sweeper to free the bytes") { try !s.hasUploadData(id) }
        let gone = try u.send("GET", "/v1/upload/\(id)")
        XCTAssertEqual(gone.status, 404)
        let again = try u.startSession(name: "x", bytes: bytes, requestId: "same")
        XCTAssertEqual(again.status, 201, "an expired requestId starts a fresh session")
        XCTAssertNotEqual(again.json["uploadId"] as? String, id)
    }
}
