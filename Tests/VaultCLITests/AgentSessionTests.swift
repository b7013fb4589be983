import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `vault agent` owns the session: the real agent process, the real keyring, real D-Bus signals.
/// Every wait is bounded by a safety net and printed, never asserted as a timing.
final class AgentSessionTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws { h = try AgentProcess.preparedVault() }

    override func tearDown() { _ = try? h?.run(["lock"]); h = nil }

    func testIdleAndAbsoluteDeadlinesRemoveTheKeyWithNoCommandRun() throws {
        let agent = try AgentProcess(h)
        let id = try h.vaultId()
        try h.ok(["unlock", "--idle", "2s", "--absolute", "1h"] + h.pw)
        XCTAssertNotNil(try h.keyringItem(id))
        // Nothing runs a vault command now: only the agent's timer can remove the key.
        let idle = waitFor(30) { (try? h.keyringItem(id)) == nil }
        XCTAssertNotNil(idle, "the key stayed in the keyring past the idle deadline: \(agent.log)")
        print("idle deadline 2 s: the keyring item was gone \(idle.map { String(format: "%.2f", $0) } ?? "-") s after unlock returned")
        var r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("idle timeout"), r.stderr)

        // In use every few hundred milliseconds, the session still ends at its absolute deadline.
        try h.ok(["unlock", "--idle", "0", "--absolute", "3s"] + h.pw)
        let absolute = try waitFor(30) {
            _ = try h.run(["ls"])
            return try h.keyringItem(id) == nil
        }
        XCTAssertNotNil(absolute, "the key stayed past the absolute deadline: \(agent.log)")
        r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("absolute timeout"), r.stderr)
        XCTAssertTrue(agent.log.contains("locked: the vault locked itself"), agent.log)
    }

    func testUseMovesTheIdleDeadlineToTheSecond() throws {
        let agent = try AgentProcess(h)
        try h.ok(["unlock", "--idle", "30s", "--absolute", "0"] + h.pw)
        func session() throws -> [String: Any] { try XCTUnwrap(try agent.status()["session"] as? [String: Any]) }
        let before = try session()
        let firstDeadline = try XCTUnwrap(before["locksAt"] as? Double)
        XCTAssertEqual(firstDeadline - (before["lastUsedAt"] as? Double ?? 0), 30, accuracy: 0.001)
        try h.ok(["ls"])                      // a command is a use
        let after = try session()
        let secondDeadline = try XCTUnwrap(after["locksAt"] as? Double)
        XCTAssertGreaterThan(secondDeadline, firstDeadline, "the idle deadline follows the last use, not the unlock")
        XCTAssertEqual(secondDeadline - (after["lastUsedAt"] as? Double ?? 0), 30, accuracy: 0.001)
        // `vault agent status` (a look at the agent, not at the vault) is no use.
        XCTAssertEqual(try session()["lastUsedAt"] as? Double, after["lastUsedAt"] as? Double)
    }

    func testLockAndSleepSignalsLockWhenThePolicySaysSo() throws {
        let bus = try PrivateBus()
        let agent = try AgentProcess(h, env: ["VAULT_AGENT_SYSTEM_BUS": bus.address])
        let id = try h.vaultId()
        try h.ok(["unlock"] + h.pw)
        func signals() throws -> Int { try agent.status()["signals"] as? Int ?? -1 }

        // Without the policy keys, a screen lock is seen and the vault stays unlocked.
        try bus.send(path: "/org/freedesktop/login1/session/_31", member: "org.freedesktop.login1.Session.Lock")
        XCTAssertNotNil(try waitFor(20) { try signals() >= 1 }, agent.log)
        XCTAssertNotNil(try h.keyringItem(id), "locked although the policy does not ask for it")
        XCTAssertTrue(agent.log.contains("the policy does not ask to lock the vault then (lockOnScreenLock)"), agent.log)

        let settings = h.home.appendingPathComponent("config/settings.json")
        try FileManager.default.createDirectory(at: settings.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"lockOnScreenLock": true, "lockOnSuspend": true}"#.utf8).write(to: settings)
        XCTAssertTrue(try h.ok(["policy", "show"]).out.contains("lockOnScreenLock"))

        try bus.send(path: "/org/freedesktop/login1/session/_31", member: "org.freedesktop.login1.Session.Lock")
        let lock = try waitFor(20) { try h.keyringItem(id) == nil }
        XCTAssertNotNil(lock, "logind's Lock did not lock: \(agent.log)")
        print("logind Lock → keyring item gone after \(lock.map { String(format: "%.3f", $0) } ?? "-") s")
        var r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("the screen locked"), r.stderr)

        try h.ok(["unlock"] + h.pw)
        try bus.send(path: "/org/freedesktop/login1", member: "org.freedesktop.login1.Manager.PrepareForSleep", args: ["boolean:true"])
        let sleep = try waitFor(20) { try h.keyringItem(id) == nil }
        XCTAssertNotNil(sleep, "PrepareForSleep did not lock: \(agent.log)")
        print("logind PrepareForSleep(true) → keyring item gone after \(sleep.map { String(format: "%.3f", $0) } ?? "-") s")
        r = try h.run(["ls"])
        XCTAssertTrue(r.stderr.contains("went to sleep"), r.stderr)
        try bus.send(path: "/org/freedesktop/login1", member: "org.freedesktop.login1.Manager.PrepareForSleep", args: ["boolean:false"])

        try h.ok(["unlock"] + h.pw)
        try PrivateBus.send("--session", path: "/org/freedesktop/ScreenSaver", member: "org.freedesktop.ScreenSaver.ActiveChanged", args: ["boolean:true"])
        let saver = try waitFor(20) { try h.keyringItem(id) == nil }
        XCTAssertNotNil(saver, "the screen saver did not lock: \(agent.log)")
        print("ScreenSaver ActiveChanged(true) → keyring item gone after \(saver.map { String(format: "%.3f", $0) } ?? "-") s")

        // `vault lock --all` goes through every agent.
        try h.ok(["unlock"] + h.pw)
        XCTAssertTrue(try h.ok(["lock", "--all"]).out.contains("1 through its agent"))
        XCTAssertNil(try h.keyringItem(id))
        XCTAssertNil(try agent.status()["session"] as? [String: Any])
    }

    func testAStolenItemOpensNothingOnceTheAgentLocks() throws {
        let id = try h.vaultId()
        // Without an agent the item holds the master key itself (format v1).
        try h.ok(["unlock"] + h.pw)
        let direct = try XCTUnwrap(try h.keyringItem(id))
        XCTAssertTrue(direct.hasPrefix("v1:"))
        let masterHex = String(direct.split(separator: ":").last ?? "")
        XCTAssertEqual(masterHex.count, 64)
        XCTAssertTrue(try h.ok(["status"]).out.contains("autolock at the next vault command only"))

        // The agent takes the session over: the item becomes the key sealed under the agent's key.
        let agent = try AgentProcess(h)
        let wrapped = try XCTUnwrap(try h.keyringItem(id))
        XCTAssertTrue(wrapped.hasPrefix("v2:"), wrapped)
        XCTAssertFalse(wrapped.contains(masterHex), "the item still holds the master key")
        XCTAssertEqual(wrapped.split(separator: ":").count, 5, "no deadlines in the item: the agent keeps them")
        XCTAssertEqual((try h.ok(["status", "--json"]).json as? [String: Any])?["autoLock"] as? String, "agent")
        try h.ok(["mkdir", "/works"])

        // Locked by the agent, a copy of the item put back opens nothing, with or without the agent.
        try h.ok(["lock"])
        try h.storeKeyringItem(id, wrapped)
        var r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3, "the agent locked: its key is gone")
        agent.stop()
        try h.storeKeyringItem(id, wrapped)
        r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.stderr.contains("held by a `vault agent` that this command cannot reach"), r.stderr)
        XCTAssertNotNil(try h.keyringItem(id), "a command leaves the item (an agent it cannot reach may hold its key)")

        // Neither does a copy taken while unlocked, once the agent is killed (its key died with it).
        let second = try AgentProcess(h)
        try h.ok(["unlock"] + h.pw)
        let copy = try XCTUnwrap(try h.keyringItem(id))
        second.kill9()
        try h.storeKeyringItem(id, copy)
        let third = try AgentProcess(h)
        XCTAssertNil(try h.keyringItem(id), "a new agent removes the item of the one before: \(third.log)")
        try h.storeKeyringItem(id, copy)
        r = try h.run(["ls"])
        XCTAssertEqual(r.status, 3)
        // And rewriting deadlines is no longer possible: the item has none; the agent's hold.
        XCTAssertTrue(try h.ok(["agent", "status"]).out.contains("session   locked"))
    }

    func testRotationHandsTheNewKeyToTheAgent() throws {
        let agent = try AgentProcess(h)
        defer { withExtendedLifetime(agent) {} }
        let id = try h.vaultId()
        try h.ok(["unlock"] + h.pw)
        try h.ok(["mkdir", "/before"])
        let before = try XCTUnwrap(try h.keyringItem(id)).split(separator: ":")
        try h.ok(["key", "rotate"] + h.pw)
        let after = try XCTUnwrap(try h.keyringItem(id)).split(separator: ":")
        XCTAssertEqual(after[0], "v2")
        XCTAssertEqual(after[1], "2", "the new epoch's key is held")
        XCTAssertEqual(after[2], before[2], "in the same agent session")
        XCTAssertEqual(try h.ok(["ls", "/"]).out, "before/\n")   // no password: the agent opens the new key
    }

    func testAnotherUsersConnectionIsRefusedAndLogged() throws {
        let agent = try AgentProcess(h)
        let runtime = try XCTUnwrap(h.env["XDG_RUNTIME_DIR"])
        let name = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: runtime + "/vault").first { $0.hasSuffix(".sock") })
        let socket = runtime + "/vault/" + name
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let client = h.root.appendingPathComponent("client.py")
        try Data("""
            import socket, struct, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(sys.argv[1])
            except OSError as e:
                print("connect failed:", e.strerror); sys.exit(0)
            body = b'{"op":"status"}'
            try:
                s.sendall(struct.pack(">II", len(body), 0) + body)
                print("answer:" if s.recv(8) else "closed without an answer")
            except OSError:
                print("closed without an answer")
            """.utf8).write(to: client)
        chmod(client.path, 0o644)
        chmod(h.root.path, 0o755)
        func asNobody() throws -> String {
            try ServerHarness.sh("/usr/bin/setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 '\(client.path)' '\(socket)'")
        }
        // The folder (0700) and the socket (0600) keep other users out...
        XCTAssertTrue(try asNobody().contains("connect failed: Permission denied"))
        // ...and were they opened up by mistake, the agent itself refuses the peer's uid.
        chmod(runtime, 0o711)
        chmod(runtime + "/vault", 0o711)
        chmod(socket, 0o666)
        XCTAssertTrue(try asNobody().contains("closed without an answer"))
        XCTAssertNotNil(waitFor(10) { agent.log.contains("refused a connection from uid 65534") }, agent.log)
        // This user is still served.
        try h.ok(["agent", "status"])
        chmod(socket, 0o600)
    }

    func testOneAgentPerVaultAndStatusWithoutOne() throws {
        var r = try h.ok(["agent", "status"])
        XCTAssertTrue(r.out.contains("not running"), r.out)
        r = try h.ok(["status"])
        XCTAssertTrue(r.out.contains("autolock at the next vault command only"), r.out)
        XCTAssertEqual((try h.ok(["status", "--json"]).json as? [String: Any])?["autoLock"] as? String, "next-command")
        let agent = try AgentProcess(h)
        r = try h.run(["agent"])
        XCTAssertEqual(r.status, 7, r.stderr)
        XCTAssertTrue(r.stderr.contains("an agent already runs for this vault (pid \(agent.pid))"), r.stderr)
        try h.ok(["agent", "stop"])
        agent.process.waitUntilExit()
        XCTAssertTrue(try h.ok(["agent", "status"]).out.contains("not running"))
    }

    func testInstallWritesTheUserUnitAndUninstallRemovesIt() throws {
        let config = h.root.appendingPathComponent("xdg-config")
        let calls = h.root.appendingPathComponent("systemctl.calls")
        let fake = h.root.appendingPathComponent("systemctl")
        try Data("#!/bin/sh\necho \"$@\" >> '\(calls.path)'\n[ \"$2\" = is-active ] && echo active\nexit 0\n".utf8).write(to: fake)
        chmod(fake.path, 0o755)
        let env = ["XDG_CONFIG_HOME": config.path, "VAULT_SYSTEMCTL": fake.path]
        let id = try h.vaultId()
        let unit = config.appendingPathComponent("systemd/user/vault-agent-\(h.localId(id)).service")
        var r = try h.ok(["agent", "install"], env: env)
        XCTAssertTrue(r.out.contains("Enabled and started"), r.out)
        let text = try String(contentsOf: unit, encoding: .utf8)
        XCTAssertTrue(text.contains("ExecStart=\"\(CLIHarness.vaultBinary)\" agent\n"), text)
        XCTAssertTrue(text.contains("Restart=on-failure\n"), text)
        XCTAssertTrue(text.contains("Environment=\"VAULT_HOME=\(h.home.path)\"\n"), text)
        XCTAssertTrue(text.contains("WantedBy=default.target"), text)
        XCTAssertEqual(try String(contentsOf: calls, encoding: .utf8),
                       "--user daemon-reload\n--user enable --now vault-agent-\(h.localId(id)).service\n")
        r = try h.ok(["agent", "status"], env: env)
        XCTAssertTrue(r.out.contains("\(unit.path) (systemd: active)"), r.out)
        r = try h.ok(["agent", "uninstall"], env: env)
        XCTAssertTrue(r.out.contains("Removed"), r.out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: unit.path))
        XCTAssertTrue(try String(contentsOf: calls, encoding: .utf8).contains("--user disable --now vault-agent-"))
        // Without a user manager, install still writes the unit and says how to start it.
        r = try h.ok(["agent", "install"], env: ["XDG_CONFIG_HOME": config.path, "VAULT_SYSTEMCTL": "/bin/false"])
        XCTAssertTrue(r.out.contains("Start it by hand"), r.out)
        XCTAssertTrue(FileManager.default.fileExists(atPath: unit.path))
    }
}
