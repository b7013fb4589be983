import CCurl
@testable import VaultHTTP
import XCTest

/// `CURLcode` → `HTTPError` classification, including the cases hard to provoke on loopback.
final class ErrorMappingTests: XCTestCase {
    private func map(_ code: UInt32, _ message: String = "") -> HTTPError {
        HTTPError(curlCode: CURLcode(rawValue: code), message: message)
    }

    func testClassification() {
        XCTAssertEqual(map(7, "refused"), .connect("refused"))
        XCTAssertEqual(map(6, "no such host"), .connect("no such host"))
        XCTAssertEqual(map(28, "Connection timed out after 10001 milliseconds"),
                       .timeout("Connection timed out after 10001 milliseconds"))
        XCTAssertEqual(map(28, "Operation too slow. Less than 1024 bytes/sec transferred the last 30 seconds"),
                       .stalled("Operation too slow. Less than 1024 bytes/sec transferred the last 30 seconds"))
        XCTAssertEqual(map(60, "x"), .tls("x"))
        XCTAssertEqual(map(90, "x"), .tls("x"))
        XCTAssertEqual(map(35, "x"), .tls("x"))
        XCTAssertEqual(map(42), .aborted)
        XCTAssertEqual(map(56, "reset"), .transport(code: 56, message: "reset"))
    }

    func testEmptyBufferFallsBackToCurlsText() {
        guard case .transport(18, let message) = map(18) else { return XCTFail() }
        XCTAssertFalse(message.isEmpty)
    }
}
