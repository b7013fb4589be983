import Foundation
import XCTest

/// Two local copies of one vault under one user (`vault join` into a second `VAULT_HOME`: a
/// second disk, a test, a demo), with the real keyring, a real agent and a real server: each copy
/// has its own session, its own agent, and `vault lock --all` locks every one.
final class LocalCopiesTests: XCTestCase {
    var a: CLIHarness!
    var b: CLIHarness!
    var server: ServerHarness!

    override func setUpWithError() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service (run scripts/test.sh)")
        a = try CLIHarness()
        try a.initVault()
        a.useFastRetry()
        try AgentProcess.prepare(a)
        server = try ServerHarness(root: a.root)
        try a.login(to: server)
        b = try CLIHarness()
        b.useFastRetry()
        b.env["XDG_RUNTIME_DIR"] = a.env["XDG_RUNTIME_DIR"]   // one user: one runtime folder, one keyring
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        XCTAssertEqual(try a.vaultId(), try b.vaultId())
    }

    override func tearDown() {
        _ = try? a?.run(["lock", "--all"])
        a = nil; b = nil; server = nil
    }

    /// Whether `vault ls` opens the copy without a password (its session is unlocked).
    func unlocked(_ h: CLIHarness) throws -> Bool {
        let r = try h.run(["ls"])
        XCTAssertTrue(r.status == 0 || r.status == 3, r.stderr)
        return r.status == 0
    }

    func testLockingOneCopyLeavesTheOtherUnlockedAndLockAllLocksBoth() throws {
        try a.ok(["unlock"] + a.pw)
        try b.ok(["unlock"] + b.pw)
        // One item each, under each copy's own id (their contents may be equal: one key, unlocked in the same second).
        XCTAssertNotEqual(a.localId(try a.vaultId()), b.localId(try b.vaultId()))
        XCTAssertNotNil(try a.keyringItem(a.vaultId()))
        XCTAssertNotNil(try b.keyringItem(b.vaultId()))
        try a.ok(["lock"])
        XCTAssertFalse(try unlocked(a))
        XCTAssertTrue(try unlocked(b), "locking one copy locked the other")

        try a.ok(["unlock"] + a.pw)
        try b.ok(["lock"])
        XCTAssertTrue(try unlocked(a), "locking one copy locked the other")
        try b.ok(["unlock"] + b.pw)
        try b.ok(["lock", "--all"])
        XCTAssertFalse(try unlocked(a))
        XCTAssertFalse(try unlocked(b))
    }

    func testWithAnAgentForOneCopyTheOtherSyncsItselfAndLockAllLocksTheAgentToo() throws {
        try a.ok(["put", try a.localFile("from-a.txt", Data("from a".utf8)), "/"] + a.pw)
        try a.ok(["sync"] + a.pw)
        let agent = try AgentProcess(a)
        try a.ok(["unlock"] + a.pw)
        try b.ok(["unlock"] + b.pw)
        XCTAssertNotNil(try agent.status()["session"], "the agent holds the first copy's session: \(agent.log)")

        let sync = try b.ok(["sync"])
        XCTAssertFalse(sync.out.contains("pulled 0"), "the second copy's sync went to the first copy's agent: \(sync.out)")
        XCTAssertEqual(try b.ok(["cat", "/from-a.txt"]).out, "from a")
        try b.ok(["put", try b.localFile("from-b.txt", Data("from b".utf8)), "/"])
        try b.ok(["sync"])
        XCTAssertNotNil(try server.children()["from-b.txt"], "the second copy's own change reached the server")

        try b.ok(["lock"])
        XCTAssertTrue(try unlocked(a), "locking the second copy locked the first (its agent)")
        XCTAssertNotNil(try agent.status()["session"], agent.log)
        try b.ok(["unlock"] + b.pw)
        try b.ok(["lock", "--all"])
        XCTAssertFalse(try unlocked(a))
        XCTAssertFalse(try unlocked(b))
        XCTAssertNil(try agent.status()["session"], "the agent of the first copy is locked too")
    }
}
