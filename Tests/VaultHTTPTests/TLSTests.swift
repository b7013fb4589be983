import Foundation
import VaultHTTP
import XCTest

/// Verification is always on: a custom CA makes a self-signed server work, pins are enforced.
final class TLSTests: XCTestCase {
    private var cert: SelfSignedCertificate!
    private var server: LocalServer!

    override func setUpWithError() throws {
        cert = try SelfSignedCertificate()
        server = try startServer(tls: cert)
    }

    override func tearDown() {
        server?.stop()
        cert?.remove()
    }

    private func client(_ configure: (inout HTTPClientConfiguration) -> Void) throws -> HTTPClient {
        var config = HTTPClientConfiguration()
        configure(&config)
        return try HTTPClient(configuration: config)
    }

    func testSelfSignedWorksWithCAFile() throws {
        let c = try client { $0.caFile = cert.certPath }
        let r = try c.send(HTTPRequest(url: server.url("/download?n=100000")))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.body.count, 100_000)
    }

    func testSelfSignedFailsWithoutCAFile() throws {
        let c = try client { _ in }
        XCTAssertThrowsError(try c.send(HTTPRequest(url: server.url("/headers")))) {
            guard case .tls? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }

    func testHostNameIsVerified() throws {
        let c = try client { $0.caFile = cert.certPath }
        XCTAssertThrowsError(try c.send(HTTPRequest(url: server.url("/headers", host: "localhost")))) {
            guard case .tls? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }

    func testPinnedPublicKeyMatchAndMismatch() throws {
        let good = try client { $0.caFile = cert.certPath; $0.pinnedPublicKeys = [cert.pin] }
        XCTAssertEqual(try good.send(HTTPRequest(url: server.url("/headers"))).status, 200)

        let other = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        let bad = try client { $0.caFile = cert.certPath; $0.pinnedPublicKeys = [other] }
        XCTAssertThrowsError(try bad.send(HTTPRequest(url: server.url("/headers")))) {
            guard case .tls? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }

        let either = try client { $0.caFile = cert.certPath; $0.pinnedPublicKeys = [other, cert.pin] }
        XCTAssertEqual(try either.send(HTTPRequest(url: server.url("/headers"))).status, 200)
    }

    /// Whatever the system's OpenSSL configuration would allow, TLS < 1.2 is refused.
    func testServerOfferingOnlyTLS10Or11IsRefused() throws {
        let legacy = try startServer(tls: cert, tlsMode: "legacy")
        let c = try client { $0.caFile = cert.certPath }
        XCTAssertThrowsError(try c.send(HTTPRequest(url: legacy.url("/headers")))) {
            guard case .tls? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }

    /// TLS 1.2 without forward secrecy (static-RSA key exchange) is refused; the same
    /// certificate with the suites the client offers works.
    func testServerOfferingOnlyStaticRSASuitesIsRefused() throws {
        let rsa = try SelfSignedCertificate(rsa: true)
        defer { rsa.remove() }
        let c = try client { $0.caFile = rsa.certPath }
        let staticRSA = try startServer(tls: rsa, tlsMode: "static-rsa")
        XCTAssertThrowsError(try c.send(HTTPRequest(url: staticRSA.url("/headers")))) {
            guard case .tls? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
        let modern = try startServer(tls: rsa)
        XCTAssertEqual(try c.send(HTTPRequest(url: modern.url("/headers"))).status, 200)
    }

    func testMalformedPinIsRejectedUpFront() {
        XCTAssertThrowsError(try client { $0.pinnedPublicKeys = ["/etc/some/key.pem"] }) {
            guard case .tls? = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }
}
