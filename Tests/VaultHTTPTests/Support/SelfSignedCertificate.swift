import Foundation
import VaultTestSupport

/// A throw-away self-signed certificate for 127.0.0.1 made with the `openssl` command, and its
/// public-key pin (`sha256//…`).
struct SelfSignedCertificate {
    let dir: String
    var certPath: String { dir + "/cert.pem" }
    var keyPath: String { dir + "/key.pem" }
    let pin: String

    /// An ECDSA P-256 key, or RSA 2048 with `rsa` (static-RSA suites need one).
    init(rsa: Bool = false) throws {
        dir = NSTemporaryDirectory() + "vault-http-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let key = rsa ? "rsa:2048" : "ec -pkeyopt ec_paramgen_curve:prime256v1"
        try Self.sh("openssl req -x509 -newkey \(key) -nodes"
                    + " -keyout '\(dir)/key.pem' -out '\(dir)/cert.pem' -days 2"
                    + " -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1")
        let b64 = try Self.sh("openssl x509 -in '\(dir)/cert.pem' -pubkey -noout"
                              + " | openssl pkey -pubin -outform der"
                              + " | openssl dgst -sha256 -binary | base64")
        pin = "sha256//" + b64.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func remove() { try? FileManager.default.removeItem(atPath: dir) }

    @discardableResult
    private static func sh(_ command: String) throws -> String {
        let r = try toolOutput("/bin/sh", ["-c", command])
        guard r.status == 0 else { throw TestFailure("command failed: \(command)") }
        return r.output
    }
}
