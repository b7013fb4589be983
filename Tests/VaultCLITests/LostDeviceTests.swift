import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto

/// A lost device (issue 11): `vault key passwd` + `vault key rotate` + `vault key reencrypt` on
/// a device still in hand re-seal the vault on the server (every file a new revision under new
/// data keys, every name and record under the new epoch), resumable after `kill -9`; the lost
/// device, holding only the old key and password, reads none of it.
final class LostDeviceTests: XCTestCase {
    func testRotateAndReencryptReplaceEverythingOnTheServerAndTheLostDeviceReadsNothing() throws {
        let a = try CLIHarness(keyring: false)
        try a.initVault()
        a.useFastRetry()
        let server = try ServerHarness(root: a.root)
        try a.login(to: server)
        var files: [String: Data] = [:]
        try a.ok(["mkdir", "/docs"] + a.pw)
        for (i, size) in [10, 70_000, 200_000, 3].enumerated() {
            let path = i % 2 == 0 ? "/docs/f\(i).bin" : "/f\(i).bin"
            files[path] = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* (i + 3)) })
            try a.ok(["put", try a.localFile("f\(i)", files[path]!), path] + a.pw)
        }
        try a.ok(["sync"] + a.pw)
        try a.ok(["evict", "/f1.bin"] + a.pw)            // one file not on this device: downloaded first
        let lost = try CLIHarness(keyring: false)
        try lost.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + lost.pw)
        let before = try blobs(server)

        let newPw = try a.localFile("newpw", Data("after the laptop was stolen\n".utf8))
        try a.ok(["key", "passwd", "--new-password-file", newPw] + a.pw)
        let pw = ["--password-file", newPw]
        try a.ok(["key", "rotate"] + pw)
        // Killed part-way, then run again: it finishes.
        let killed = try a.run(["key", "reencrypt"] + pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "reencrypt-some"])
        XCTAssertEqual(killed.status, 9, killed.stderr)
        let r = try a.ok(["key", "reencrypt"] + pw)
        XCTAssertTrue(r.out.contains("Sent"), r.out)
        try a.ok(["sync"] + pw)
        XCTAssertEqual((try a.ok(["status", "--json"] + pw).json as? [String: Any])?["pendingChanges"] as? Int, 0)

        // The server: every name and record sealed under epoch 2, every head a new blob of epoch 2.
        let decoder = ServerDecoder(home: a.home, password: "after the laptop was stolen")
        let codec = try decoder.codec()
        let all = try server.curl("GET", "/v1/files?scope=all").json["files"] as? [[String: Any]] ?? []
        XCTAssertEqual(all.count, 5)
        for f in all {
            XCTAssertTrue((f["name"] as? String ?? "").hasPrefix("2."), "\(f)")
            XCTAssertTrue((f["meta"] as? String ?? "").hasPrefix("2."), "\(f)")
            guard f["type"] as? String == "file" else { continue }
            XCTAssertTrue((f["contentMeta"] as? String ?? "").hasPrefix("2."), "\(f)")
            let d = try decoder.decode(f, codec: codec)
            XCTAssertFalse(before.values.contains(d["blob"] as? String ?? ""), "a new blob under new data keys: \(d)")
            let content = try server.curl("GET", "/v1/files/\(f["id"] as! String)/content").body
            XCTAssertEqual(try SealedBlobHeader(bytes: Array(content.prefix(SealedBlobHeader.size))).keyEpoch, 2)
            XCTAssertEqual(try server.contentSHA256WithDecoder(decoder, f["id"] as! String), d["sha256"] as? String)
        }
        for (path, data) in files {
            try a.ok(["evict", path] + pw)
            XCTAssertEqual(try a.ok(["cat", path] + pw).stdout, data, path)
        }

        // The lost device: it learns of the rotation, and its password no longer opens anything.
        let s = try lost.run(["sync"] + lost.pw)
        XCTAssertEqual(s.status, 3, s.stderr)
        let u = try lost.run(["unlock"] + lost.pw)
        XCTAssertEqual(u.status, 3, u.stderr)
        XCTAssertTrue(u.stderr.contains("does not open the new key"), u.stderr)
        let lostCodec = try ServerDecoder(home: lost.home).codec()
        for f in all where f["type"] as? String == "file" {
            XCTAssertThrowsError(try lostCodec.openContent(f["contentMeta"] as! String, nodeId: f["id"] as! String), "no record opens")
        }
    }

    /// Server id → head blob id, decoded.
    func blobs(_ server: ServerHarness) throws -> [String: String] {
        let codec = try server.decoder!.codec()
        var out: [String: String] = [:]
        for f in try server.curl("GET", "/v1/files?scope=all").json["files"] as? [[String: Any]] ?? [] where f["type"] as? String == "file" {
            out[f["id"] as! String] = try server.decoder!.decode(f, codec: codec)["blob"] as? String
        }
        return out
    }
}

extension ServerHarness {
    /// The plaintext SHA-256 of file `id`'s content, decoded with `decoder`.
    func contentSHA256WithDecoder(_ decoder: ServerDecoder, _ id: String) throws -> String {
        let a = try curl("GET", "/v1/files/\(id)/content")
        let f = try curl("GET", "/v1/files/\(id)")
        return try decoder.plaintextSHA256(of: a.body, contentMeta: f.json["contentMeta"] as? String ?? "", id: id)
    }
}
