import XCTest
@testable import VaultServer

/// The HTTP-free pieces: range parsing, ETags, names, routing, tokens.
final class UnitTests: XCTestCase {
    func testContentRangeParsing() {
        XCTAssertEqual(ByteRanges.parseContentRange("bytes 0-9/100"), .init(start: 0, end: 9, total: 100))
        XCTAssertEqual(ByteRanges.parseContentRange("bytes */0"), .init(start: -1, end: -1, total: 0))
        XCTAssertEqual(ByteRanges.parseContentRange("bytes 5-9/*"), .init(start: 5, end: 9, total: nil))
        for bad in ["", "bytes", "bytes 9-5/10", "bytes a-b/10", "items 0-1/2", "bytes 0-1/x", "bytes -1-2/3"] {
            XCTAssertNil(ByteRanges.parseContentRange(bad), bad)
        }
    }

    func testRangeParsing() {
        XCTAssertEqual(ByteRanges.parseRange("bytes=0-9", size: 100), .partial(start: 0, end: 9))
        XCTAssertEqual(ByteRanges.parseRange("bytes=90-", size: 100), .partial(start: 90, end: 99))
        XCTAssertEqual(ByteRanges.parseRange("bytes=-10", size: 100), .partial(start: 90, end: 99))
        XCTAssertEqual(ByteRanges.parseRange("bytes=50-500", size: 100), .partial(start: 50, end: 99))
        XCTAssertEqual(ByteRanges.parseRange("bytes=100-", size: 100), .unsatisfiable)
        XCTAssertEqual(ByteRanges.parseRange("bytes=0-1,5-6", size: 100), .whole)
        XCTAssertEqual(ByteRanges.parseRange(nil, size: 100), .whole)
        XCTAssertEqual(ByteRanges.parseRange("bytes=-0", size: 100), .unsatisfiable)
    }

    func testETagsAndNames() throws {
        XCTAssertEqual(VaultService.parseETag("\"3\""), 3)
        XCTAssertEqual(VaultService.parseETag("W/\"4\""), 4)
        XCTAssertEqual(VaultService.parseETag(" 5 "), 5)
        XCTAssertNil(VaultService.parseETag("\"x\""))
        XCTAssertNoThrow(try VaultService.validateName("ok name.txt"))
        XCTAssertNoThrow(try VaultService.validateName("...")) // only "." and ".." are reserved
        for bad in ["", ".", "..", "a/b", "nul\u{0}", String(repeating: "é", count: 513)] {
            XCTAssertThrowsError(try VaultService.validateName(bad), bad.debugDescription)
        }
    }

    func testRouterMatching() {
        let router = Router(routes: [
            Route("GET", "/v1/files/{id}") { _ in .respond(HTTPResponse(status: 200)) },
            Route("GET", "/v1/files/{id}/content") { _ in .respond(HTTPResponse(status: 200)) },
        ])
        guard case .found(let r, let params) = router.match(method: "GET", path: "/v1/files/abc/content") else {
            return XCTFail("no match")
        }
        XCTAssertEqual(r.pattern, "/v1/files/{id}/content")
        XCTAssertEqual(params["id"], "abc")
        guard case .methodNotAllowed(let allowed) = router.match(method: "PUT", path: "/v1/files/abc") else {
            return XCTFail("expected 405")
        }
        XCTAssertEqual(allowed, ["GET"])
        guard case .notFound = router.match(method: "GET", path: "/v1/files//content") else { return XCTFail("empty id") }
    }

    func testTokens() {
        Sodium.initialize()
        let signer = TokenSigner(secret: Array(repeating: 7, count: 32))
        let (token, _) = signer.issue(userId: "u1", ttl: 60)
        XCTAssertEqual(signer.verify(token), "u1")
        XCTAssertNil(TokenSigner(secret: Array(repeating: 8, count: 32)).verify(token), "other key")
        XCTAssertNil(signer.verify(token, now: Date().addingTimeInterval(120)), "expired")
        let parts = token.split(separator: ".")
        let noneAlg = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        XCTAssertNil(signer.verify(noneAlg))
    }
}
