@testable import VaultHTTP
import XCTest

final class ResponseHeaderParserTests: XCTestCase {
    private func parse(_ lines: [String]) -> ResponseHeaderParser {
        var p = ResponseHeaderParser()
        for line in lines {
            Array(line.utf8).withUnsafeBytes { p.consume($0) }
        }
        return p
    }

    func testKeepsOnlyTheFinalResponsesFields() {
        let p = parse(["HTTP/1.1 103 Early Hints\r\n", "Link: </a>\r\n", "\r\n",
                       "HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "X-A:  b c \t\r\n", "\r\n"])
        XCTAssertEqual(p.fields.map(\.0), ["Content-Length", "X-A"])
        XCTAssertEqual(p.fields.map(\.1), ["5", "b c"])
        XCTAssertTrue(p.blockComplete)
    }

    func testFoldedLinesAndJunk() {
        let p = parse(["HTTP/2 200\r\n", "x-long: one\r\n", "\t two\r\n", "no colon here\r\n",
                       ": empty name\r\n", "empty-value:\r\n"])
        XCTAssertEqual(p.fields.map(\.0), ["x-long", "empty-value"])
        XCTAssertEqual(p.fields.map(\.1), ["one two", ""])
    }

    func testCaseInsensitiveLookup() {
        let r = HTTPResponse(status: 200, headers: [("Retry-After", "7"), ("set-cookie", "a"), ("Set-Cookie", "b")])
        XCTAssertEqual(r.header("retry-after"), "7")
        XCTAssertEqual(r.headers(named: "SET-COOKIE"), ["a", "b"])
        XCTAssertNil(r.header("missing"))
    }

    func testRequestDescriptionHidesHeaders() {
        let req = HTTPRequest(method: .put, url: "https://h/x", headers: [("Authorization", "Bearer secret")])
        XCTAssertFalse(String(describing: req).contains("secret"))
    }
}
