import XCTest

/// The server's TLS (issue 9, item 17): TLS 1.2 and 1.3 only, ECDHE with AEAD suites only, by
/// default; `--tls-priorities` changes it and a bad string stops the start. Checked from outside
/// with `openssl s_client`, for an RSA and an ECDSA certificate.
final class TLSPolicyTests: XCTestCase {
    func testOldVersionsStaticRSAAndCBCAreRefusedModernOnesNegotiated() throws {
        for keyType in ["rsa:2048", "ec"] {
            let cert = try Certificate(keyType)
            defer { cert.remove() }
            let s = try ServerProcess(args: ["--tls-cert", cert.certPath, "--tls-key", cert.keyPath])
            // OpenSSL 3 itself offers TLS < 1.2 only at security level 0.
            let legacy = ["-cipher", "DEFAULT@SECLEVEL=0"]
            for refused in [["-tls1"] + legacy, ["-tls1_1"] + legacy,
                            ["-tls1_2", "-cipher", "AES128-SHA:AES256-GCM-SHA384"],                  // static RSA, no forward secrecy
                            ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA"],   // CBC
                            ["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256"],
                            ["-tls1_3", "-groups", "ffdhe2048"]] {
                let r = try handshake(port: s.port, refused)
                XCTAssertNil(r.protocol, "\(keyType) \(refused): negotiated \(r.protocol ?? "")")
            }
            XCTAssertEqual(try handshake(port: s.port, ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256"]).protocol, "TLSv1.2")
            XCTAssertEqual(try handshake(port: s.port, ["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-CHACHA20-POLY1305"]).protocol, "TLSv1.2")
            XCTAssertEqual(try handshake(port: s.port, ["-tls1_3"]).protocol, "TLSv1.3")
        }
    }

    func testPrioritiesOptionIsUsedAndABadOneStopsTheStart() throws {
        let cert = try Certificate("ec")
        defer { cert.remove() }
        let old = try ServerProcess(args: ["--tls-cert", cert.certPath, "--tls-key", cert.keyPath,
                                           "--tls-priorities", "NORMAL:-VERS-ALL:+VERS-TLS1.1"])
        XCTAssertEqual(try handshake(port: old.port, ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]).protocol, "TLSv1.1")
        XCTAssertNil(try handshake(port: old.port, ["-tls1_3"]).protocol)
        XCTAssertThrowsError(try ServerProcess(args: ["--tls-cert", cert.certPath, "--tls-key", cert.keyPath,
                                                      "--tls-priorities", "NO-SUCH-KEYWORD"]))
    }

    // MARK: -

    /// A self-signed certificate for 127.0.0.1 (`openssl req`).
    private struct Certificate {
        let dir = NSTemporaryDirectory() + "vault-tls-" + UUID().uuidString
        var certPath: String { dir + "/cert.pem" }
        var keyPath: String { dir + "/key.pem" }

        init(_ keyType: String) throws {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let curve = keyType == "ec" ? ["-pkeyopt", "ec_paramgen_curve:prime256v1"] : []
            let args = ["req", "-x509", "-newkey", keyType] + curve + ["-nodes", "-keyout", keyPath, "-out", certPath,
                                                                   "-days", "1", "-subj", "/CN=127.0.0.1"]
            guard try TLSPolicyTests.openssl(args).status == 0 else { throw XCTSkip("openssl cannot make a certificate") }
        }

        func remove() { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// `openssl s_client` against the server: the negotiated protocol, nil when the handshake
    /// failed.
    private func handshake(port: UInt16, _ args: [String]) throws -> (protocol: String?, output: String) {
        let r = try Self.openssl(["s_client", "-connect", "127.0.0.1:\(port)", "-brief"] + args)
        let line = r.output.split(separator: "\n").first { $0.hasPrefix("Protocol version:") }
        let proto = line.map { $0.dropFirst("Protocol version:".count).trimmingCharacters(in: .whitespaces) }
        return (r.status == 0 ? proto : nil, r.output)
    }

    private static func openssl(_ args: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
