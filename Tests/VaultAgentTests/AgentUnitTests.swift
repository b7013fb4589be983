import Foundation
import XCTest
@testable import VaultAgent
@testable import VaultSync
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The agent's pure parts: the session item format, the wire frames, the event-stream parser,
/// memory.events parsing, event ids, the unit file.
final class AgentUnitTests: XCTestCase {
    let vaultId = String(repeating: "ab", count: 16)

    func testWrappedKeyOpensOnlyWithItsAgentKeyVaultEpochAndSession() throws {
        let master = SecureBytes.random(count: 32), agentKey = SecureBytes.random(count: 32)
        let sid = SecureRandom.bytes(16)
        let w = try AgentWrappedKey.wrap(masterKey: master, agentKey: agentKey, vaultId: vaultId, epoch: 3, sessionId: sid)
        XCTAssertTrue(try w.unwrap(agentKey: agentKey, vaultId: vaultId).constantTimeEquals(master))
        // The text form round-trips and never holds the master key.
        let parsed = try XCTUnwrap(Array(w.text.utf8).withUnsafeBytes { AgentWrappedKey.parse($0) })
        XCTAssertEqual(parsed, w)
        XCTAssertFalse(w.text.contains(master.hexForStorage))
        XCTAssertTrue(w.text.hasPrefix("v2:3:"))
        // Another agent key, vault, epoch or session: nothing opens (the AAD binds them).
        XCTAssertThrowsError(try w.unwrap(agentKey: SecureBytes.random(count: 32), vaultId: vaultId))
        XCTAssertThrowsError(try w.unwrap(agentKey: agentKey, vaultId: String(repeating: "cd", count: 16)))
        let otherEpoch = AgentWrappedKey(epoch: 4, sessionId: sid, nonce: w.nonce, sealed: w.sealed)
        XCTAssertThrowsError(try otherEpoch.unwrap(agentKey: agentKey, vaultId: vaultId))
        let otherSession = AgentWrappedKey(epoch: 3, sessionId: SecureRandom.bytes(16), nonce: w.nonce, sealed: w.sealed)
        XCTAssertThrowsError(try otherSession.unwrap(agentKey: agentKey, vaultId: vaultId))
        var flipped = w.sealed
        flipped[5] ^= 1
        XCTAssertThrowsError(try AgentWrappedKey(epoch: 3, sessionId: sid, nonce: w.nonce, sealed: flipped).unwrap(agentKey: agentKey, vaultId: vaultId))
    }

    func testWrappedKeyParserRefusesEveryOtherShape() {
        let good = "v2:1:\(String(repeating: "0", count: 32)):\(String(repeating: "1", count: 24)):\(String(repeating: "2", count: 96))"
        func parse(_ s: String) -> AgentWrappedKey? { Array(s.utf8).withUnsafeBytes { AgentWrappedKey.parse($0) } }
        XCTAssertNotNil(parse(good))
        for bad in ["", "v2:", "v1:1:2:3:4:5:" + String(repeating: "a", count: 64), good + ":", good.replacingOccurrences(of: "v2:1:", with: "v2:x:"),
                    good.replacingOccurrences(of: "v2:1:", with: "v2:-1:"), String(good.dropLast()), good + "2", good.replacingOccurrences(of: ":1111", with: ":zz11")] {
            XCTAssertNil(parse(bad), bad)
        }
    }

    func testFramesCarryJSONAndAKeyAndRefuseMalformedHeaders() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let a = UnixSocket(fd: fds[0]), b = UnixSocket(fd: fds[1])
        let key = SecureBytes.random(count: 32)
        var req = AgentRequest(.hold)
        req.epoch = 7; req.idleTimeout = 3; req.absoluteTimeout = 0
        try AgentWire.send(req, secret: key, on: a)
        let (got, secret) = try XCTUnwrap(try AgentWire.receive(AgentRequest.self, on: b, firstByteTimeout: 1))
        XCTAssertEqual(got.op, .hold)
        XCTAssertEqual(got.epoch, 7)
        XCTAssertTrue(try XCTUnwrap(secret).constantTimeEquals(key))
        // A secret of another size, an empty or oversized JSON length: refused before reading on.
        for header: [UInt8] in [[0, 0, 0, 2, 0, 0, 0, 31], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0x20, 0, 0, 0, 0, 0, 0]] {
            try header.withUnsafeBytes { try a.writeAll($0) }
            XCTAssertThrowsError(try AgentWire.receive(AgentRequest.self, on: b, firstByteTimeout: 1)) { XCTAssertTrue($0 is AgentWire.Malformed, "\($0)") }
        }
        // A frame cut short times out instead of hanging.
        try [UInt8]([0, 0, 0, 10, 0, 0, 0, 0, 123]).withUnsafeBytes { try a.writeAll($0) }
        XCTAssertThrowsError(try b.readExactly(UnsafeMutableRawBufferPointer.allocate(byteCount: 18, alignment: 1), firstByteTimeout: 1, timeout: 0.2))
    }

    func testEventStreamParserFollowsTheFormat() throws {
        var p = EventStreamParser()
        func feed(_ s: String) throws -> [ChangeEvent] { try Array(s.utf8).withUnsafeBytes { try p.feed($0) } }
        XCTAssertEqual(try feed("retry: 2000\n: connected\n\n"), [])
        XCTAssertEqual(p.retry, 2)
        // Split anywhere, CRLF and CR line ends, multi-line data, comments ignored.
        XCTAssertEqual(try feed("id: 7\r\nevent: chan"), [])
        XCTAssertEqual(try feed("ged\rdata: {\"cursor\":7}\ndata: x\n: keep-alive\n\n"),
                       [ChangeEvent(id: "7", type: "changed", data: "{\"cursor\":7}\nx")])
        // The id is kept for the next event; an event without data is not dispatched.
        XCTAssertEqual(try feed("event: changed\n\ndata:y\n\n"), [ChangeEvent(id: "7", type: "message", data: "y")])
        XCTAssertThrowsError(try feed(String(repeating: "a", count: (64 << 10) + 1)))
    }

    func testMemoryEventsCountsAndIncreases() {
        let before = MemoryPressureWatch.pressureCounts("low 0\nhigh 2\nmax 0\noom 0\noom_kill 0\n")
        XCTAssertEqual(before, ["high": 2, "max": 0, "oom": 0, "oom_kill": 0])
        XCTAssertNil(MemoryPressureWatch.increase(from: before, to: before))
        let after = MemoryPressureWatch.pressureCounts("low 9\nhigh 3\nmax 1\noom 0\noom_kill 0\n")
        XCTAssertEqual(MemoryPressureWatch.increase(from: before, to: after), "high 2→3, max 0→1")
        XCTAssertEqual(MemoryPressureWatch.increase(from: [:], to: MemoryPressureWatch.pressureCounts("high 1")), "high 0→1")
    }

    func testOnlyPlainEventIdsAreKept() {
        for ok in ["1", "123456", "a-b_c.d"] { XCTAssertTrue(ChangeFeed.isPlainId(ok), ok) }
        for bad in ["", "--x x", "1;rm", "a\nb", String(repeating: "1", count: 65), "é"] where !bad.isEmpty {
            XCTAssertFalse(ChangeFeed.isPlainId(bad), bad)
        }
    }

    func testUnitFileQuotesPathsAndKeepsOnlyTheVaultsVariables() throws {
        let env = ["VAULT_HOME": "/home/a b/100%/v\"x", "XDG_CONFIG_HOME": "/tmp/cfg", "SECRET_THING": "no", "HOME": "/home/a"]
        let unit = SystemdUnit(vaultId: vaultId, layout: VaultLayout(root: env["VAULT_HOME"]!), environment: env, executable: "/opt/vault bin/vault")
        XCTAssertEqual(unit.path, "/tmp/cfg/systemd/user/vault-agent-\(VaultLayout(root: env["VAULT_HOME"]!).localId(vaultId: vaultId)).service")
        XCTAssertTrue(unit.text.contains("ExecStart=\"/opt/vault bin/vault\" agent\n"), unit.text)
        XCTAssertTrue(unit.text.contains("Environment=\"VAULT_HOME=/home/a b/100%%/v\\\"x\"\n"), unit.text)
        XCTAssertTrue(unit.text.contains("Restart=on-failure\n"))
        XCTAssertFalse(unit.text.contains("SECRET_THING"))
        let broken = SystemdUnit(vaultId: vaultId, layout: VaultLayout(root: "/x\nExecStartPre=/bin/evil"), environment: ["VAULT_HOME": "/x\nExecStartPre=/bin/evil"], executable: "/v")
        XCTAssertThrowsError(try broken.install(start: false)) { XCTAssertEqual(($0 as? VaultError)?.kind, .invalidName) }
    }

    /// The local copy id: 16 hex digits, one per folder (a symbolic link names the same copy),
    /// another for another vault in the same folder; the agent's paths and unit follow it.
    func testEachFolderOfAVaultIsItsOwnLocalCopy() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("vault-copies-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let one = root.appendingPathComponent("one"), two = root.appendingPathComponent("two"), link = root.appendingPathComponent("link")
        for d in [one, two] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: one)
        let a = VaultLayout(root: one.path).localId(vaultId: vaultId)
        XCTAssertEqual(a.count, 16)
        XCTAssertTrue(a.allSatisfy { "0123456789abcdef".contains($0) }, a)
        XCTAssertNotEqual(a, VaultLayout(root: two.path).localId(vaultId: vaultId))
        XCTAssertEqual(a, VaultLayout(root: link.path).localId(vaultId: vaultId))
        XCTAssertEqual(a, VaultLayout(root: one.path + "/.").localId(vaultId: vaultId))
        XCTAssertNotEqual(a, VaultLayout(root: one.path).localId(vaultId: String(repeating: "7", count: 32)))
        let env = ["XDG_RUNTIME_DIR": "/run/user/1"]
        XCTAssertNotEqual(AgentPaths(localId: a, environment: env)?.socket,
                          AgentPaths(localId: VaultLayout(root: two.path).localId(vaultId: vaultId), environment: env)?.socket)
    }

    /// A unit an older version named by the vault id is replaced by `install` and removed by
    /// `uninstall` when it runs this folder, and left alone when it runs another.
    func testTheOlderUnitOfThisFolderIsReplacedAndAnotherFoldersIsLeftAlone() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("vault-units-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let units = root.appendingPathComponent("cfg/systemd/user")
        try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
        let env = ["XDG_CONFIG_HOME": root.appendingPathComponent("cfg").path, "VAULT_SYSTEMCTL": "/bin/true"]
        let old = units.appendingPathComponent("vault-agent-\(vaultId.prefix(16)).service")
        func oldUnit(for folder: String) throws {
            try Data("[Unit]\nDescription=vault agent for \(folder): auto-lock at the deadline\n".utf8).write(to: old)
        }
        try oldUnit(for: "/elsewhere/vault")
        let unit = SystemdUnit(vaultId: vaultId, layout: VaultLayout(root: "/here/vault"), environment: env, executable: "/v")
        _ = try unit.install(start: false)
        XCTAssertTrue(FileManager.default.fileExists(atPath: old.path), "another folder's unit is not this one's")
        try oldUnit(for: "/here/vault")
        let again = SystemdUnit(vaultId: vaultId, layout: VaultLayout(root: "/here/vault"), environment: env, executable: "/v")
        XCTAssertTrue(try again.install(start: false).contains("Removed \(old.path)."))
        XCTAssertFalse(FileManager.default.fileExists(atPath: old.path))
        XCTAssertTrue(again.isInstalled)
        try oldUnit(for: "/here/vault")
        let notes = try SystemdUnit(vaultId: vaultId, layout: VaultLayout(root: "/here/vault"), environment: env, executable: "/v").uninstall()
        XCTAssertFalse(FileManager.default.fileExists(atPath: old.path), "\(notes)")
        XCTAssertFalse(again.isInstalled, "\(notes)")
    }
}
