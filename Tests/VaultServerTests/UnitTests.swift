import XCTest
import VaultPrimitives
@testable import VaultServer

/// The HTTP-free pieces: range parsing, ETags, names, routing, tokens.
final class UnitTests: XCTestCase {
    func testContentRangeParsing() {
        XCTAssertEqual(ByteRanges.parseContentRange("bytes 0-9/100"), .init(start: 0, end: 9, total: 100))
        XCTAssertEqual(ByteRanges.parseContentRange("bytes */0"), .init(start: -1, end: -1, total: 0))
        XCTAssertEqual(ByteRanges.parseContentRange("bytes 5-9/*"), .init(start: 5, end: 9, total: nil))
        let max18: Int64 = 999_999_999_999_999_999
        XCTAssertEqual(ByteRanges.parseContentRange("bytes 0-\(max18)/\(max18)"), .init(start: 0, end: max18, total: max18))
        for bad in ["", "bytes", "bytes 9-5/10", "bytes a-b/10", "items 0-1/2", "bytes 0-1/x", "bytes -1-2/3", "bytes */*",
                    "bytes 0-9223372036854775808/1", "bytes 0-\(Int64.max)/1", "bytes 0-1000000000000000000/1", "bytes +0-1/2", "bytes 0-1/-2", " bytes 0-1/2", "bytes  0-1/2"] {
            XCTAssertNil(ByteRanges.parseContentRange(bad), bad)
        }
    }

    func testDigitsNeverOverflow() {
        XCTAssertEqual(Digits.parse("0"), 0)
        XCTAssertEqual(Digits.parse(String(Int64.max)), Int64.max)
        XCTAssertEqual(Digits.parse("1000", max: 1000), 1000)
        for bad in ["", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x1", "9223372036854775808", "99999999999999999999", "١"] {
            XCTAssertNil(Digits.parse(bad), bad)
        }
        XCTAssertNil(Digits.parse("1001", max: 1000))
        XCTAssertEqual(Digits.parseSaturating("99999999999999999999999"), Int64.max)
        XCTAssertNil(Digits.parseSaturating("-5"))
        XCTAssertEqual(Int64.max.addingSaturating(1), Int64.max)
        XCTAssertEqual(Int64.min.addingSaturating(-1), Int64.min)
        XCTAssertTrue(VaultService.fitsQuota(1, usage: Int64.max - 1, quota: Int64.max))
        XCTAssertFalse(VaultService.fitsQuota(Int64.max, usage: 1, quota: Int64.max))
        XCTAssertFalse(VaultService.fitsQuota(-1, usage: 0, quota: 10))
        XCTAssertFalse(VaultService.fitsQuota(Int64.min, usage: Int64.max, quota: Int64.max))
    }

    func testPercentDecodingIsStrict() throws {
        let decode = { (s: String) in try RequestDecoding.percentDecode(Array(s.utf8), field: "f", plusWasSpace: true) }
        XCTAssertEqual(try decode("a%20b%2Bc%e2%9c%93"), "a b+c✓")
        XCTAssertEqual(try decode("%01%1B"), "\u{1}\u{1b}")
        for bad in ["%00", "a%", "a%2", "%zz", "%C0%80", "%C0%AF", "%ED%A0%80", "%F4%90%80%80", "%FF", "%80", "\u{7f}", "é", "\u{1}"] {
            XCTAssertThrowsError(try decode(bad), bad.debugDescription)
        }
        XCTAssertEqual(try RequestDecoding.segments("/v1/files/a%2Fb/"), ["v1", "files", "a/b"])
        XCTAssertThrowsError(try RequestDecoding.segments("/v1/files/a%00"))
        XCTAssertEqual(try RequestDecoding.headerValue(Array(" \t x y \t".utf8), name: "h"), "x y")
        for bad in [[0x78, 0x00], [0x01], [0x7f], [0xff], [0xc0, 0x80]] as [[UInt8]] {
            XCTAssertThrowsError(try RequestDecoding.headerValue(bad, name: "h"), "\(bad)")
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
        XCTAssertEqual(ByteRanges.parseRange("bytes=0-\(Int64.max)", size: 100), .partial(start: 0, end: 99))
        XCTAssertEqual(ByteRanges.parseRange("bytes=-99999999999999999999", size: 100), .partial(start: 0, end: 99))
        XCTAssertEqual(ByteRanges.parseRange("bytes=99999999999999999999-", size: 100), .unsatisfiable)
        XCTAssertEqual(ByteRanges.parseRange("bytes=\(Int64.max - 1)-\(Int64.max)", size: Int64.max), .partial(start: Int64.max - 1, end: Int64.max - 1))
        XCTAssertEqual(ByteRanges.parseRange("bytes=-1-5", size: 100), .whole)
    }

    func testETagsAndNames() throws {
        XCTAssertEqual(VaultService.parseETag("\"3\""), 3)
        XCTAssertEqual(VaultService.parseETag("W/\"4\""), 4)
        XCTAssertEqual(VaultService.parseETag("5"), 5)
        XCTAssertEqual(VaultService.parseETag("\"999999999999999999\""), 999_999_999_999_999_999)
        for bad in ["\"x\"", " 5 ", "\"0\"", "\"05\"", "\"-1\"", "\"+1\"", "W/5", "\"5", "5\"", "\"\"", "*",
                    "\"1000000000000000000\"", "\"\(Int64.max)\"", "\"9223372036854775808\""] {
            XCTAssertNil(VaultService.parseETag(bad), bad)
        }
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
        let (token, _) = signer.issue(userId: "u1", generation: 3, ttl: 60)
        XCTAssertEqual(signer.verify(token)?.userId, "u1")
        XCTAssertEqual(signer.verify(token)?.generation, 3, "the generation it was issued in")
        XCTAssertNil(TokenSigner(secret: Array(repeating: 8, count: 32)).verify(token), "other key")
        XCTAssertNil(signer.verify(token, now: Date().addingTimeInterval(120)), "expired")
        let parts = token.split(separator: ".")
        let noneAlg = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        XCTAssertNil(signer.verify(noneAlg))
    }
}
