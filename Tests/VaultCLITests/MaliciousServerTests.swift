import Foundation
import VaultTestSupport
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto

/// A malicious server (issue 11, the ETH Zurich classes that apply to one user's devices), each
/// lie set with `vault-server`'s test-only `lie` switch: replaced or downgraded key material, and
/// unauthenticated chunking, foreign content and changed metadata on downloads. Every one ends in
/// an integrity error (exit 6) with nothing published or changed on the device. (Names, moves,
/// injection in listings: the pull side's tests.)
final class MaliciousServerTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    let size = 150_000   // three segments

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        h.useFastRetry()
        server = try ServerHarness(root: h.root)
        try h.login(to: server)
    }

    override func tearDown() { h = nil; server = nil }

    func lie(_ json: String) throws { try server.faults(#"{"lie": \#(json)}"#) }

    var keyslots: Data { get throws { try Data(contentsOf: h.home.appendingPathComponent("keyslots")) } }

    /// Runs `args`, expects exit 6 with `message`, and that the keyslot file did not change.
    func expectRefused(_ args: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try keyslots
        let r = try h.run(args + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr, file: file, line: line)
        XCTAssertTrue(r.stderr.contains(message), r.stderr, file: file, line: line)
        XCTAssertEqual(try keyslots, before, "the keyslot file did not change", file: file, line: line)
    }

    // MARK: Keys

    func testReplacedOrDowngradedKeyMaterialIsRefused() throws {
        try h.ok(["sync"] + h.pw)
        let stored = try XCTUnwrap(server.curl("GET", "/v1/keys/envelope").json["envelope"] as? String)
        func envelope(_ bytes: [UInt8]) -> String {
            String(decoding: try! JSONSerialization.data(withJSONObject: String(decoding: bytes, as: UTF8.self), options: .fragmentsAllowed), as: UTF8.self)
        }
        // Another vault's envelope.
        let c = try CLIHarness(keyring: false)
        try c.initVault()
        try lie(#"{"kind": "envelope", "envelope": \#(envelope([UInt8](try Data(contentsOf: c.home.appendingPathComponent("keyslots")))))}"#)
        try expectRefused(["sync"], "belongs to another vault")
        // Weaker KDF parameters than the policy's floor (refused before any key work).
        let weak = try reformatted(Array(stored.utf8)) { body in
            var slots = body["slots"] as! [[String: Any]]
            var kdf = slots[0]["kdf"] as! [String: Any]; kdf["memLimitBytes"] = 8192; slots[0]["kdf"] = kdf
            body["slots"] = slots
        }
        try lie(#"{"kind": "envelope", "envelope": \#(envelope(weak))}"#)
        let policy = h.root.appendingPathComponent("policy.json")
        try Data(#"{"kdfMinArgon2MemoryBytes": 8388608}"#.utf8).write(to: policy)
        h.env["VAULT_POLICY_FILE"] = policy.path
        try expectRefused(["sync"], "weaker than the policy allows")
        h.env["VAULT_POLICY_FILE"] = nil
        // An older format version.
        try lie(#"{"kind": "envelope", "envelope": \#(envelope(try reformatted(Array(stored.utf8)) { $0["format"] = 0 }))}"#)
        try expectRefused(["sync"], "format 0")
        // An older generation, after this device saw a newer one.
        try server.faults("{}")
        _ = try h.ok(["key", "add-recovery"] + h.pw)
        try lie(#"{"kind": "envelope", "envelope": \#(envelope(Array(stored.utf8)))}"#)
        try expectRefused(["sync"], "older than generation")
        // A key the server chose, at the same epoch: its MAC does not verify under this vault's key.
        let local = try KeyslotFile.parse([UInt8](try keyslots))
        try lie(#"{"kind": "envelope", "envelope": \#(envelope(try forged(local, epochs: 0)))}"#)
        try expectRefused(["sync"], "MAC does not verify")
        // …and as a "rotation": unlock refuses it (its history does not lead to this device's key).
        try lie(#"{"kind": "envelope", "envelope": \#(envelope(try forged(local, epochs: 1)))}"#)
        let s = try h.run(["sync"] + h.pw)
        XCTAssertEqual(s.status, 3, s.stderr)
        XCTAssertTrue(s.stderr.contains("unlock again"), s.stderr)
        try expectRefused(["unlock"], "does not lead")
        XCTAssertEqual(try KeyslotFile.parse([UInt8](try keyslots)).body.epoch, 1)
        // With the lies off, the vault syncs as before.
        try server.faults("{}")
        try h.ok(["sync"] + h.pw)
        try h.ok(["ls"] + h.pw)
    }

    // MARK: Content

    /// A synced file evicted from this device, its server id and sealed size.
    func remoteFile(_ name: String, seed: UInt8 = 1) throws -> (id: String, sealed: Int, data: Data) {
        let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) &+ seed })
        try h.ok(["put", try h.localFile(name, data), "/" + name] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/" + name] + h.pw)
        let f = try XCTUnwrap(try server.children()[name])
        return (f["id"] as! String, f["sealedSize"] as! Int, data)
    }

    /// `vault cat` ends in exit 6 and nothing of the content is kept: not downloaded, no cache
    /// blob, no partial in tmp/.
    func expectNothingPublished(_ name: String, _ message: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try h.run(["cat", "/" + name] + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr, file: file, line: line)
        if let message { XCTAssertTrue(r.stderr.contains(message), r.stderr, file: file, line: line) }
        XCTAssertTrue(r.stdout.isEmpty, "nothing reached the reader", file: file, line: line)
        XCTAssertEqual(try h.node("/" + name)["contentState"] as? String, "NOT_DOWNLOADED", file: file, line: line)
        let cached = try h.blobFiles("cache").map(\.lastPathComponent)
        XCTAssertTrue(cached.isEmpty, "\(cached)", file: file, line: line)
        let tmp = try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path)
        XCTAssertEqual(tmp, [], "no partial kept", file: file, line: line)
    }

    func testUnauthenticatedChunkingIsCaught() throws {
        let (id, z, data) = try remoteFile("f.bin")
        let hd = SealedBlobHeader.size, st = 65_536 + 16
        let cases: [(String, [[Int]])] = [
            ("truncated", [[0, z - 100]]),
            ("the final segment dropped", [[0, hd + 2 * st]]),
            ("a segment dropped", [[0, hd + st], [hd + 2 * st, z]]),
            ("segments reordered", [[0, hd], [hd + st, hd + 2 * st], [hd, hd + st], [hd + 2 * st, z]]),
            ("a segment duplicated over the next", [[0, hd + st], [hd, hd + st], [hd + 2 * st, z]]),
            ("the header of another blob", [[0, 1], [0, z - 1]]),
        ]
        for (what, ranges) in cases {
            let json = ranges.map { "[\($0[0]), \($0[1])]" }.joined(separator: ", ")
            try lie(#"{"kind": "splice", "fileId": "\#(id)", "ranges": [\#(json)]}"#)
            try expectNothingPublished("f.bin")
            _ = what
        }
        try server.faults("{}")
        XCTAssertEqual(try h.ok(["cat", "/f.bin"] + h.pw).stdout, data, "the real content still reads")
    }

    func testContentFromAnotherFileRevisionOrAccountIsCaught() throws {
        let (id, _, _) = try remoteFile("f.bin")
        let (otherId, _, _) = try remoteFile("g.bin", seed: 9)
        try lie(#"{"kind": "contentFrom", "fileId": "\#(id)", "fromFileId": "\#(otherId)"}"#)
        try expectNothingPublished("f.bin", "another vault or blob")
        // An older revision of the same file served as the head's content.
        try server.faults("{}")
        let v2 = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        try h.ok(["put", "--replace", try h.localFile("v2", v2), "/f.bin"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/f.bin"] + h.pw)
        let revisions = try server.curl("GET", "/v1/files/\(id)/revisions").json["revisions"] as? [[String: Any]] ?? []
        let older = try XCTUnwrap(revisions.last?["id"] as? String)
        try lie(#"{"kind": "contentFrom", "fileId": "\#(id)", "fromRevisionId": "\#(older)"}"#)
        try expectNothingPublished("f.bin", "another vault or blob")
        // Another account's blob (same server, user bob, his own vault).
        try server.faults("{}")
        try server.addUser("bob", password: "bob's server pass")
        let bob = try CLIHarness(keyring: false)
        try bob.initVault()
        let bobPw = try bob.localFile("server-pw", Data("bob's server pass\n".utf8))
        try bob.ok(["login", "--server", server.url, "--user", "bob", "--server-password-file", bobPw] + bob.pw)
        try bob.ok(["put", try bob.localFile("x", Data(count: size)), "/x.bin"] + bob.pw)
        try bob.ok(["sync"] + bob.pw)
        let bobFile = try XCTUnwrap(try bob.decoderFiles(server: server, user: "bob", password: "bob's server pass").first)
        try lie(#"{"kind": "contentFrom", "fileId": "\#(id)", "fromFileId": "\#(bobFile)"}"#)
        try expectNothingPublished("f.bin", "another vault or blob")
        try server.faults("{}")
        XCTAssertEqual(try h.ok(["cat", "/f.bin"] + h.pw).stdout, v2)
    }

    func testChangedSizeTypeOrARolledBackHeadIsCaught() throws {
        let (id, z, _) = try remoteFile("f.bin")
        try lie(#"{"kind": "listing", "fileId": "\#(id)", "size": \#(z + 1)}"#)
        try expectNothingPublished("f.bin", "is listed with")
        try lie(#"{"kind": "listing", "fileId": "\#(id)", "size": \#(z - 1)}"#)
        try expectNothingPublished("f.bin", "is listed with")
        try lie(#"{"kind": "listing", "fileId": "\#(id)", "type": "folder"}"#)
        try expectNothingPublished("f.bin", "another type")
        // A rollback: the head served as the older revision, after this device wrote the newer.
        try server.faults("{}")
        let v2 = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        try h.ok(["put", "--replace", try h.localFile("v2", v2), "/f.bin"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/f.bin"] + h.pw)
        let revisions = try server.curl("GET", "/v1/files/\(id)/revisions").json["revisions"] as? [[String: Any]] ?? []
        let older = try XCTUnwrap(revisions.last?["id"] as? String)
        try lie(#"{"kind": "listing", "fileId": "\#(id)", "fromRevisionId": "\#(older)"}"#)
        try expectNothingPublished("f.bin", "rollback")
        try server.faults("{}")
        XCTAssertEqual(try h.ok(["cat", "/f.bin"] + h.pw).stdout, v2)
    }

    // MARK: Helpers

    /// `bytes` with its body changed by `edit`, its checksum line (not its MAC) recomputed.
    func reformatted(_ bytes: [UInt8], _ edit: (inout [String: Any]) -> Void) throws -> [UInt8] {
        try reformattedKeyslotBytes(bytes, edit)
    }

    /// An envelope the server made itself for this vault: a master key of its own (`epochs`
    /// ahead), a password slot for the same password, a history entry wrapping a key of its own.
    func forged(_ local: KeyslotFile, epochs: UInt32) throws -> [UInt8] {
        let master = SecureBytes.random(count: 32)
        let epoch = local.body.epoch + epochs
        let keys = try KeyHierarchy(masterKey: master, vaultId: local.vaultId, epoch: epoch)
        var file = local
        file.body.epoch = epoch
        file.body.generation = (file.body.generation ?? 0) + 10
        file.body.slots = [try KeyslotFile.passwordSlot(id: "password-1", password: SecureBytes(copying: Array(CLIHarness.password.utf8)),
                                                        kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)),
                                                        masterKey: master, vaultId: local.body.vaultId)]
        if epochs > 0 {
            file.body.history = [try KeyslotFile.historyEntry(oldMaster: SecureBytes.random(count: 32), oldEpoch: epoch - 1, newKeys: keys,
                                                              vaultId: local.body.vaultId)]
        }
        return try file.serialized(macKey: keys.keyslotMacKey)
    }
}

extension ServerHarness {
    /// Adds a user to the running server's stores.
    func addUser(_ name: String, password: String) throws {
        let pw = dataDir.deletingLastPathComponent().appendingPathComponent("\(name).pw")
        try Data((password + "\n").utf8).write(to: pw)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["user", "add", name, "--data", dataDir.path, "--password-file", pw.path] + storeArgs
        p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
        try p.run(); p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw TransferTestError("vault-server user add \(name) failed") }
    }
}

extension CLIHarness {
    /// The ids of `user`'s files on `server` (a token of their own).
    func decoderFiles(server: ServerHarness, user: String, password: String) throws -> [String] {
        let login = try JSONSerialization.data(withJSONObject: ["username": user, "password": password])
        let t = try server.curl("POST", "/v1/auth/token", json: String(decoding: login, as: UTF8.self), auth: false)
        let token = try XCTUnwrap(t.json["token"] as? String)
        let r = try server.curl("GET", "/v1/files?scope=all", auth: false, headers: ["Authorization": "Bearer \(token)"])
        return (r.json["files"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }
}
