import Foundation
import VaultHTTP
import XCTest

/// Status codes, headers, methods and connection reuse.
final class ProtocolTests: XCTestCase {
    func testRedirectIsNotFollowed() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let r = try client.send(HTTPRequest(url: server.url("/redirect")))
        XCTAssertEqual(r.status, 308)
        XCTAssertEqual(r.header("location"), "/echo")
        XCTAssertEqual(r.header("RANGE"), "bytes=0-99")

        var config = HTTPClientConfiguration()
        config.followRedirects = true
        let following = try HTTPClient(configuration: config)
        XCTAssertEqual(try following.send(HTTPRequest(url: server.url("/redirect"))).status, 404,
                       "with followRedirects the GET lands on /echo")
    }

    func testServiceUnavailableWithRetryAfterIsAResponse() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let r = try client.send(HTTPRequest(url: server.url("/busy")))
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.header("Retry-After"), "7")
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "busy, come back later\n")
    }

    func testInterimResponseHeadersAreDropped() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let r = try client.send(HTTPRequest(url: server.url("/interim")))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("x-final"), "1")
        XCTAssertNil(r.header("link"))
        XCTAssertEqual(r.body, Array("final".utf8))
    }

    func testRequestHeadersMethodsAndKeepAlive() throws {
        let server = try startServer()
        var config = HTTPClientConfiguration()
        config.userAgent = "vault-test/9"
        let client = try HTTPClient(configuration: config)

        let get = try client.send(HTTPRequest(url: server.url("/headers"),
                                              headers: [("X-Custom", "v1"), ("Authorization", "Bearer t")]))
        let seen = try seenHeaders(get)
        XCTAssertEqual(seen["user-agent"], "vault-test/9")
        XCTAssertEqual(seen["x-custom"], "v1")
        XCTAssertEqual(seen["authorization"], "Bearer t")

        let post = try client.send(HTTPRequest(method: .post, url: server.url("/headers"), body: .bytes([1, 2, 3])))
        let postSeen = try seenHeaders(post)
        XCTAssertEqual(try json(post)["method"] as? String, "POST")
        XCTAssertEqual(postSeen["content-length"], "3")
        XCTAssertNil(postSeen["content-type"], "no form content type invented")
        XCTAssertNil(postSeen["expect"])

        let delete = try client.send(HTTPRequest(method: .delete, url: server.url("/headers")))
        XCTAssertEqual(try json(delete)["method"] as? String, "DELETE")

        let patch = try client.send(HTTPRequest(method: .patch, url: server.url("/headers"), body: .bytes([9])))
        XCTAssertEqual(try json(patch)["method"] as? String, "PATCH")
        XCTAssertEqual(try seenHeaders(patch)["content-length"], "1")

        let head = try client.send(HTTPRequest(method: .head, url: server.url("/download?n=100")))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("content-length"), "100")
        XCTAssertTrue(head.body.isEmpty)

        let ports = try (0..<3).map { _ in
            try json(client.send(HTTPRequest(url: server.url("/headers"))))["client_port"] as? Int
        }
        XCTAssertEqual(Set(ports.compactMap { $0 }).count, 1, "one kept-alive connection: \(ports)")
    }

    func testHeaderWithLineBreakIsRefusedWithoutEchoingTheValue() throws {
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        XCTAssertThrowsError(try client.send(HTTPRequest(url: "http://127.0.0.1:1/",
                                                         headers: [("Authorization", "Bearer s3cret\r\nX: y")]))) {
            XCTAssertFalse(String(describing: $0).contains("s3cret"))
            guard case .transport? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }
}
