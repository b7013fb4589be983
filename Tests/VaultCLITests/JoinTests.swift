import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys

/// Two devices of one vault through the real binaries and a real server (SECURITY.md
/// "Envelope"): `vault login` puts the envelope on the server (or refuses an account that is
/// another vault's or was synced in plaintext), `vault join` makes a second device of it (or
/// nothing at all), slot changes and rotations on one device reach the other.
final class JoinTests: XCTestCase {
    var a: CLIHarness!
    var b: CLIHarness!
    var server: ServerHarness!

    override func setUpWithError() throws {
        a = try CLIHarness(keyring: false)
        try a.initVault()
        a.useFastRetry()
        server = try ServerHarness(root: a.root)
        try a.login(to: server)
        b = try CLIHarness(keyring: false)
        b.useFastRetry()
    }

    override func tearDown() { a = nil; b = nil; server = nil }

    var joinArgs: [String] { ["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] }

    func slots(_ h: CLIHarness, _ pw: [String]? = nil) throws -> [String] {
        try XCTUnwrap(try h.ok(["key", "list", "--json"] + (pw ?? h.pw)).json as? [[String: Any]]).compactMap { $0["id"] as? String }.sorted()
    }

    func vaultId(_ h: CLIHarness) throws -> String {
        try XCTUnwrap((try h.ok(["status", "--json"] + h.pw).json as? [String: Any])?["vaultId"] as? String)
    }

    func testJoinWithTheRightPasswordMakesTheSameVaultAndAWrongOneLeavesNothing() throws {
        let wrong = try b.localFile("wrong", Data("not the password\n".utf8))
        let bad = try b.run(joinArgs + ["--password-file", wrong])
        XCTAssertEqual(bad.status, 3, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("wrong password"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: b.home.path), "not even an empty folder")

        let r = try b.ok(joinArgs + b.pw)
        XCTAssertTrue(r.out.contains("the tree arrives with `vault sync`") || r.out.contains("The tree arrives"), r.out)
        XCTAssertEqual(try vaultId(b), try vaultId(a))
        XCTAssertEqual(try Data(contentsOf: b.home.appendingPathComponent("keyslots")),
                       try Data(contentsOf: a.home.appendingPathComponent("keyslots")), "the same key slots")
        XCTAssertEqual((try b.ok(["ls", "--json"] + b.pw).json as? [Any])?.count, 0, "it opens (its own, empty tree)")
        try b.ok(["sync"] + b.pw)
        // Its own device id and database: content B sends, A can decode (same key).
        try b.ok(["put", try b.localFile("x", Data("from b".utf8)), "/from-b.txt"] + b.pw)
        try b.ok(["sync"] + b.pw)
        XCTAssertEqual(try server.children()["from-b.txt"]?["sha256"] as? String, sha256Hex(Data("from b".utf8)))
        // Joining again where a vault is: refused.
        XCTAssertEqual(try b.run(joinArgs + b.pw).status, 5)
    }

    func testJoinWithTheRecoveryKeyAndAdminRecoverOnAJoinedVault() throws {
        let key = try XCTUnwrap((try a.ok(["key", "add-recovery", "--json"] + a.pw).json as? [String: String])?["recoveryKey"])
        let org = a.root.appendingPathComponent("org").path
        try a.ok(["admin", "keygen", "--out", org])
        try a.ok(["key", "add-escrow", "--org-key", org + "/org-escrow.pub"] + a.pw)
        let keyFile = try b.localFile("rk", Data((key + "\n").utf8))
        let r = try b.run(joinArgs + ["--recovery-key-file", keyFile])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try vaultId(b), try vaultId(a))
        XCTAssertEqual(try slots(b), try slots(a))
        // The organisation recovers the joined vault with its escrow key; the new password
        // reaches the server and A adopts it.
        let newPw = try b.localFile("newpw", Data("recovered password\n".utf8))
        try b.ok(["admin", "recover", "--org-key", org + "/org-escrow.key", "--new-password-file", newPw, "--kdf-ops", "1", "--kdf-mem", "8M"])
        try a.ok(["sync"] + a.pw)
        XCTAssertEqual(try a.run(["ls"] + a.pw).status, 3, "A's old password was replaced everywhere")
        XCTAssertEqual(try a.run(["ls", "--password-file", newPw]).status, 0)
    }

    func testJoinRefusesAnEnvelopeWeakerThanThePolicyAndLeavesNothing() throws {
        let config = b.home.deletingLastPathComponent().appendingPathComponent("policy.json")
        try Data(#"{"kdfMinArgon2MemoryBytes": 67108864}"#.utf8).write(to: config)
        let r = try b.run(joinArgs + b.pw, env: ["VAULT_POLICY_FILE": config.path])
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertTrue(r.stderr.contains("weaker than the policy allows"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: b.home.path))
    }

    func testLoginRefusesAnotherVaultsAccountAndAPlaintextAccount() throws {
        // Another vault on the same account.
        b = try CLIHarness(keyring: false)
        try b.initVault()
        let r = try b.run(["login", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        XCTAssertEqual(r.status, 5, r.stderr)
        XCTAssertTrue(r.stderr.contains("this account holds another vault: use `vault join` in an empty VAULT_HOME"), r.stderr)
        XCTAssertTrue(try b.ok(["status"] + b.pw).out.contains("no server"), "nothing stored")

        // An account with files but no envelope (synced in plaintext by an older vault).
        let plain = b.root.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        let other = try ServerHarness(root: plain)
        XCTAssertEqual(try other.curl("POST", "/v1/files", json: #"{"name":"old-plaintext-folder","type":"folder"}"#).status, 201)
        let p = try b.run(["login", "--server", other.url, "--user", other.user, "--server-password-file", other.passwordFile.path] + b.pw)
        XCTAssertEqual(p.status, 5, p.stderr)
        XCTAssertTrue(p.stderr.contains("synced in plaintext by an older vault"), p.stderr)
        XCTAssertTrue(p.stderr.contains("SECURITY.md"), p.stderr)
        XCTAssertEqual(try other.curl("GET", "/v1/keys/envelope").status, 404, "no envelope was put there")
    }

    /// passwd and add-recovery on A reach the server; B adopts them at its next sync (and then
    /// opens with A's new password).
    func testSlotChangesOnOneDeviceReachTheOtherAtItsNextSync() throws {
        try b.ok(joinArgs + b.pw)
        let newPw = try a.localFile("newpw", Data("a brand new password\n".utf8))
        try a.ok(["key", "passwd", "--new-password-file", newPw] + a.pw)
        let newArgs = ["--password-file", newPw]
        _ = try a.ok(["key", "add-recovery"] + newArgs)
        let r = try b.ok(["sync"] + b.pw)
        XCTAssertTrue(r.stderr.contains("key slots changed on"), r.stderr)
        XCTAssertEqual(try slots(b, newArgs), try slots(a, newArgs))
        XCTAssertEqual(try b.run(["ls"] + b.pw).status, 3, "the old password no longer opens B")
        XCTAssertEqual(try Data(contentsOf: b.home.appendingPathComponent("keyslots")),
                       try Data(contentsOf: a.home.appendingPathComponent("keyslots")))
    }

    /// Both devices change the envelope without seeing each other's change: the second upload
    /// gets a 412, re-applies its change on top, and no slot is lost; the first adopts the merge.
    func testTwoDevicesChangingTheEnvelopeAtOnceLoseNoSlot() throws {
        try b.ok(joinArgs + b.pw)
        try b.ok(["sync"] + b.pw)
        _ = try a.ok(["key", "add-recovery"] + a.pw)          // A uploads first
        _ = try b.ok(["key", "add-recovery"] + b.pw)          // B's upload: 412, merged, uploaded
        // B, offline, changes again; the next sync uploads it.
        try server.restart(kill: false)
        let org = a.root.appendingPathComponent("org").path
        try a.ok(["admin", "keygen", "--out", org])
        let offline = try b.run(["key", "add-escrow", "--org-key", org + "/org-escrow.pub"] + b.pw,
                                env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_SERVER_URL": "http://127.0.0.1:1"])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertTrue(offline.stderr.contains("the next `vault sync` uploads it"), offline.stderr)
        _ = try a.ok(["key", "add-recovery"] + a.pw)
        try b.ok(["sync"] + b.pw)
        try a.ok(["sync"] + a.pw)
        let all = try slots(a)
        XCTAssertEqual(all.filter { $0.hasPrefix("recovery-") }.count, 3, "\(all)")
        XCTAssertEqual(all.filter { $0.hasPrefix("escrow-") }.count, 1, "\(all)")
        XCTAssertEqual(try slots(b), all)
    }

    /// A rotates; B's next sync stops with "unlock again"; `vault unlock` on B re-keys it (the
    /// new key's history leads to B's own), and B reads content of both epochs from the server.
    func testRotationOnOneDeviceMakesTheOtherUnlockAgainThenReadOldAndNewContent() throws {
        try b.ok(joinArgs + b.pw)
        let old = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try b.ok(["put", try b.localFile("old", old), "/old.bin"] + b.pw)
        try b.ok(["sync"] + b.pw)
        try a.ok(["config", "set", "device-name", "desk-a"] + a.pw)
        let r = try a.ok(["key", "rotate"] + a.pw)
        XCTAssertTrue(r.out.contains("epoch 2"), r.out)
        let s = try b.run(["sync"] + b.pw)
        XCTAssertEqual(s.status, 3, s.stderr)
        XCTAssertTrue(s.stderr.contains("the vault key was rotated on"), s.stderr)
        XCTAssertTrue(s.stderr.contains("unlock again (`vault unlock`)"), s.stderr)
        XCTAssertTrue(s.stderr.contains("rotated on desk-a"), "the device that rotated is named by its chosen name: \(s.stderr)")
        let envelope = try XCTUnwrap(server.curl("GET", "/v1/keys/envelope").json["envelope"] as? String)
        let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(envelope.split(separator: "\n")[0].utf8)) as? [String: Any])
        let device = try XCTUnwrap(body["device"] as? String)
        XCTAssertTrue(device.hasPrefix("1.") && device.count > 40, "the device's name is sealed (under the epoch before): \(device)")
        let u = try b.ok(["unlock"] + b.pw)
        XCTAssertTrue(u.stderr.contains("now uses epoch 2"), u.stderr)
        XCTAssertEqual(try Data(contentsOf: b.home.appendingPathComponent("keyslots")),
                       try Data(contentsOf: a.home.appendingPathComponent("keyslots")))
        // New content (epoch 2) and the old one (epoch 1, as the server holds it) both read.
        let new = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try b.ok(["put", try b.localFile("new", new), "/new.bin"] + b.pw)
        try b.ok(["sync"] + b.pw)
        try b.ok(["evict", "/old.bin", "/new.bin"] + b.pw)
        XCTAssertEqual(try b.ok(["cat", "/old.bin"] + b.pw).stdout, old)
        XCTAssertEqual(try b.ok(["cat", "/new.bin"] + b.pw).stdout, new)
        XCTAssertEqual(try server.children()["new.bin"]?["contentMeta"].flatMap { ($0 as? String)?.hasPrefix("2.") }, true)
        try a.ok(["sync"] + a.pw)
    }
}
