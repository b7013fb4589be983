import Foundation
import VaultHTTP
import XCTest

/// Request and response bodies stream in pieces with constant memory.
final class StreamingTests: XCTestCase {
    func testStreamedUploadOf64MiBIsPulledInPiecesWithFlatMemory() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let total: Int64 = 64 << 20
        var offset: Int64 = 0
        var pieces = 0
        var largestPiece = 0
        let rssBefore = residentBytes()
        var peakRSS = rssBefore
        let body = HTTPBody.stream(length: total) { buffer in
            let n = Int(min(Int64(buffer.count), total - offset))
            Pattern.fill(UnsafeMutableRawBufferPointer(rebasing: buffer[..<n]), offset: offset)
            offset += Int64(n)
            pieces += 1
            largestPiece = max(largestPiece, n)
            if pieces % 8 == 0 { peakRSS = max(peakRSS, residentBytes()) }
            return n
        }
        let response = try client.send(HTTPRequest(method: .put, url: server.url("/echo"), body: body))
        XCTAssertEqual(response.status, 200)
        let echo = try json(response)
        XCTAssertEqual((echo["length"] as? NSNumber)?.int64Value, total)
        XCTAssertEqual(echo["pattern"] as? Bool, true, "server saw the bytes in order")
        XCTAssertTrue(echo["expect"] is NSNull, "no Expect: 100-continue round trip")
        XCTAssertEqual(offset, total)
        XCTAssertGreaterThan(pieces, 32, "read callback pulled the body in pieces")
        XCTAssertLessThanOrEqual(largestPiece, 2 << 20, "no piece near the whole body")
        XCTAssertLessThan(peakRSS - rssBefore, 24 << 20, "memory grew with the body size")
    }

    func testBytesBodyAndSHA256() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let r = try client.send(HTTPRequest(method: .post, url: server.url("/echo"), body: .bytes(Array("hello".utf8))))
        let echo = try json(r)
        XCTAssertEqual(echo["sha256"] as? String, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        XCTAssertEqual((echo["length"] as? NSNumber)?.intValue, 5)
    }

    func testRangeDownloadStreamsPiecesAtTheRightOffset() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        let size: Int64 = 24 << 20
        let start: Int64 = 1_000_003
        var offset = start
        var pieces = 0
        var allMatch = true
        var head: HTTPResponse?
        let rssBefore = residentBytes()
        let response = try client.send(
            HTTPRequest(url: server.url("/download?n=\(size)"), headers: [("Range", "bytes=\(start)-")]),
            onHead: { head = $0 },
            onBody: { piece in
                XCTAssertNotNil(head, "head delivered before the first body piece")
                if !Pattern.matches(piece, offset: offset) { allMatch = false }
                offset += Int64(piece.count)
                pieces += 1
                return true
            })
        XCTAssertEqual(response.status, 206)
        XCTAssertEqual(head?.status, 206)
        XCTAssertEqual(response.header("content-range"), "bytes \(start)-\(size - 1)/\(size)")
        XCTAssertEqual(offset, size)
        XCTAssertTrue(allMatch)
        XCTAssertGreaterThan(pieces, 4)
        XCTAssertTrue(response.body.isEmpty)
        XCTAssertLessThan(residentBytes() - rssBefore, 16 << 20)
    }

    func testOnBodyFalseAbortsAndTheClientStaysUsable() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        var received = 0
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/download?n=\(8 << 20)"))) { piece in
            received += piece.count
            return false
        }) { XCTAssertEqual($0 as? HTTPError, .aborted) }
        XCTAssertLessThan(received, 8 << 20)
        let again = try client.send(HTTPRequest(url: server.url("/download?n=1000")))
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.body.count, 1000)
    }

    func testErrorsThrownByBodyClosuresSurfaceUnchanged() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/download?n=100000"))) { _ in
            throw Boom()
        }) { XCTAssertEqual($0 as? Boom, Boom()) }

        var calls = 0
        let failing = HTTPBody.stream(length: 10 << 20) { buffer in
            calls += 1
            if calls == 3 { throw Boom() }
            Pattern.fill(buffer, offset: 0)
            return buffer.count
        }
        XCTAssertThrowsError(try client.send(HTTPRequest(method: .put, url: server.url("/echo"), body: failing))) {
            XCTAssertEqual($0 as? Boom, Boom())
        }
        XCTAssertEqual(try client.send(HTTPRequest(url: server.url("/download?n=10"))).body.count, 10,
                       "the client works again after a failed transfer")
    }

    func testStreamShorterThanDeclaredFails() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        var sent = 0
        let short = HTTPBody.stream(length: 1 << 20) { buffer in
            guard sent < 1000 else { return 0 }
            let n = min(buffer.count, 1000 - sent)
            sent += n
            return n
        }
        XCTAssertThrowsError(try client.send(HTTPRequest(method: .put, url: server.url("/echo"), body: short))) {
            guard case .transport(let code, let message)? = $0 as? HTTPError else { return XCTFail("\($0)") }
            XCTAssertEqual(code, 26)
            XCTAssertTrue(message.contains("1000 of 1048576"), message)
        }
    }

    func testCollectLimit() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/download?n=5000")), collectUpTo: 4999)) {
            XCTAssertEqual($0 as? HTTPError, .tooLarge)
        }
        XCTAssertEqual(try client.send(HTTPRequest(url: server.url("/download?n=5000")), collectUpTo: 5000).body.count,
                       5000)
    }

    func testProgressReportsAndCanAbort() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        var reports: [(Int64, Int64)] = []
        client.onProgress = { up, down in reports.append((up, down)); return true }
        let total: Int64 = 16 << 20
        var offset: Int64 = 0
        let body = HTTPBody.stream(length: total) { buffer in
            let n = Int(min(Int64(buffer.count), total - offset))
            Pattern.fill(UnsafeMutableRawBufferPointer(rebasing: buffer[..<n]), offset: offset)
            offset += Int64(n)
            return n
        }
        _ = try client.send(HTTPRequest(method: .put, url: server.url("/echo"), body: body))
        XCTAssertFalse(reports.isEmpty)
        XCTAssertEqual(reports.map(\.0), reports.map(\.0).sorted(), "upload count only grows")

        client.onProgress = { _, _ in false }
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/download?n=\(64 << 20)"))) { _ in true }) {
            XCTAssertEqual($0 as? HTTPError, .aborted)
        }
    }
}
