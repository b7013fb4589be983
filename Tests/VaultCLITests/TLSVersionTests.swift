import Foundation
import XCTest

/// `vault` refuses a server that offers only TLS 1.0/1.1 (issue 9, item 17), even where the
/// system's OpenSSL configuration would allow it: `OPENSSL_CONF` below permits TLS 1.0 at
/// security level 0, as an old or careless system configuration might.
final class TLSVersionTests: XCTestCase {
    func testLoginRefusesAServerOfferingOnlyOldTLSWhateverOpenSSLAllows() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let permissive = h.root.appendingPathComponent("openssl-legacy.cnf")
        try Data("""
            openssl_conf = default_conf
            [default_conf]
            ssl_conf = ssl_sect
            [ssl_sect]
            system_default = system_default_sect
            [system_default_sect]
            MinProtocol = TLSv1
            CipherString = DEFAULT@SECLEVEL=0

            """.utf8).write(to: permissive)
        func server(_ name: String, _ args: [String]) throws -> ServerHarness {
            let root = h.root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            return try ServerHarness(root: root, args: args, tls: true)
        }
        func login(_ s: ServerHarness) throws -> CLIHarness.Result {
            try h.run(["login", "--server", s.url, "--user", s.user, "--server-password-file", s.passwordFile.path,
                       "--ca-file", s.certFile!.path] + h.pw, env: ["OPENSSL_CONF": permissive.path])
        }
        let old = try server("old", ["--tls-priorities", "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0"])
        let refused = try login(old)
        XCTAssertEqual(refused.status, 9, "TLS 1.1 is refused: \(refused.stderr)")
        XCTAssertFalse(old.log.contains("/v1/auth/token"), "no request went over it")

        let modern = try server("new", [])
        let ok = try login(modern)
        XCTAssertEqual(ok.status, 0, "the same configuration reaches a TLS 1.2+ server: \(ok.stderr)")
    }
}
