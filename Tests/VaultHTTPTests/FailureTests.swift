import Foundation
import VaultHTTP
import XCTest

/// Network faults map to typed errors.
final class FailureTests: XCTestCase {
    func testStalledServerTriggersLowSpeedTimeout() throws {
        let server = try startServer()
        var config = HTTPClientConfiguration()
        config.lowSpeedLimit = 1024
        config.lowSpeedTime = 1
        let client = try HTTPClient(configuration: config)
        let started = Date()
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/stall")))) {
            guard case .stalled? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    func testUploadToAServerThatStopsReadingStalls() throws {
        let server = try startServer()
        var config = HTTPClientConfiguration()
        config.lowSpeedTime = 1
        let client = try HTTPClient(configuration: config)
        let total: Int64 = 256 << 20
        var offset: Int64 = 0
        let body = HTTPBody.stream(length: total) { buffer in
            let n = Int(min(Int64(buffer.count), total - offset))
            offset += Int64(n)
            return n
        }
        let started = Date()
        XCTAssertThrowsError(try client.send(HTTPRequest(method: .put, url: server.url("/sink-stall"), body: body))) {
            guard case .stalled? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
        XCTAssertLessThan(offset, total)
        // libcurl averages speed over ~5 s, so a burst into socket buffers delays detection.
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
    }

    func testAnotherThreadCanCancelAStalledTransferThroughOnProgress() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration()) // 30 s stall limit
        let cancel = CancelFlag()
        client.onProgress = { _, _ in !cancel.isSet }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { cancel.set() }
        let started = Date()
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/stall")))) {
            XCTAssertEqual($0 as? HTTPError, .aborted)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testConnectionResetMidBodyIsATransportError() throws {
        let server = try startServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        var received = 0
        XCTAssertThrowsError(try client.send(HTTPRequest(url: server.url("/reset"))) { piece in
            received += piece.count
            return true
        }) {
            guard case .transport(let code, _)? = $0 as? HTTPError else { return XCTFail("\($0)") }
            XCTAssertTrue([18, 56].contains(code), "CURLE_PARTIAL_FILE or CURLE_RECV_ERROR, got \(code)")
        }
        XCTAssertEqual(received, 64 * 1024)
    }

    func testRefusedConnectionIsConnectError() throws {
        let server = try startServer()
        let url = server.url("/headers")
        server.stop()
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        XCTAssertThrowsError(try client.send(HTTPRequest(url: url))) {
            guard case .connect? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }

    func testOnlyHTTPAndHTTPSAreAllowed() throws {
        let client = try HTTPClient(configuration: HTTPClientConfiguration())
        XCTAssertThrowsError(try client.send(HTTPRequest(url: "file:///etc/passwd"))) {
            guard case .transport(let code, _)? = $0 as? HTTPError else { return XCTFail("\($0)") }
            XCTAssertEqual(code, 1) // CURLE_UNSUPPORTED_PROTOCOL
        }
    }
}

/// A flag set from one thread and read from another.
final class CancelFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
