import Foundation
import XCTest
import VaultTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `vault agent` runs transfers in the background and listens for changes: the real agent, the
/// real keyring and a real `vault-server`. Waits are bounded safety nets, never timing claims.
final class AgentTransferTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    var agent: AgentProcess!

    override func setUpWithError() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service (run scripts/test.sh)")
        h = try CLIHarness()
        try h.initVault()
        h.useFastRetry()
        server = try ServerHarness(root: h.root, args: ["--max-chunk", "1048576"])
        try h.login(to: server)
    }

    override func tearDown() {
        agent?.stop()
        if ProcessInfo.processInfo.environment["VAULT_TEST_SHOW_AGENT_LOG"] == "1", let log = agent?.log { print(log) }
        _ = try? h?.run(["lock"])
        agent = nil; server = nil; h = nil
    }

    func startAgent(_ env: [String: String] = [:]) throws {
        agent = try AgentProcess(h, env: env)
        try h.ok(["unlock"] + h.pw)
    }

    func randomFile(_ name: String, bytes: Int) throws -> (String, Data) {
        let data = TestData.data(bytes, for: self.name)
        return (try h.localFile(name, data), data)
    }

    func work() throws -> [String: Any] { try XCTUnwrap(try agent.status()["work"] as? [String: Any]) }

    /// Waits until the server holds `name` with `data`'s checksum.
    func waitForServer(_ name: String, _ data: Data, bound: TimeInterval = 120) throws -> TimeInterval? {
        let sha = sha256Hex(data)
        return try waitFor(bound) { try server.children()[name]?["sha256"] as? String == sha }
    }

    func testPutReturnsAtOnceAndTheAgentUploadsWithProgressInTheDatabase() throws {
        try startAgent()
        let size = 16 << 20
        let (big, data) = try randomFile("big.bin", bytes: size)
        try server.faults(#"{"delayMs": 150}"#)   // each chunk answers slowly: the upload takes seconds
        let put = try h.ok(["put", big, "/"])
        XCTAssertTrue(put.out.contains("the agent uploads it in the background"), put.out)
        XCTAssertNil(try server.children()["big.bin"], "put returned only after the upload")
        // `vault transfers` reads the progress the agent's pass writes, beside it, without "busy".
        var seen: [Int] = []
        try waitFor(60) {
            let t = try h.transfers().first { $0["direction"] as? String == "upload" }
            if let done = t?["bytesDone"] as? Int, t?["state"] as? String == "running", done > 0, done < size { seen.append(done) }
            if seen.count >= 2 { return true }
            return try server.children()["big.bin"] != nil
        }
        XCTAssertFalse(seen.isEmpty, "no running upload with partial progress was seen")
        try server.faults("{}")
        let took = try waitForServer("big.bin", data)
        XCTAssertNotNil(took, "the agent did not finish the upload: \(agent.log)")
        print("background upload of \(size >> 20) MiB finished \(took.map { String(format: "%.1f", $0) } ?? "-") s after the progress checks; progress seen: \(seen)")
        XCTAssertNotNil(try waitFor(20) { try h.transfers().first?["state"] as? String == "done" })
        XCTAssertEqual(try h.node("/big.bin")["pendingOp"] as? String, nil)
        // `vault sync` is served by the agent: nothing left to send, no "busy".
        let sync = try h.ok(["sync"])
        XCTAssertTrue(sync.out.contains("Pushed 0 change(s)"), sync.out)
    }

    func testKillNineOfTheAgentMidUploadThenRestartResumes() throws {
        try startAgent()
        let size = 24 << 20
        let (big, data) = try randomFile("big.bin", bytes: size)
        try server.faults(#"{"delayMs": 200}"#)
        try h.ok(["put", big, "/"])
        XCTAssertNotNil(waitFor(60) { server.chunkLines(status: 308).count >= 6 }, agent.log)
        let workerPid = try XCTUnwrap(try work()["workerPid"] as? Int)
        agent.kill9()
        // The worker (and the key it held) dies with the agent.
        XCTAssertNotNil(waitFor(10) { kill(pid_t(workerPid), 0) != 0 }, "the sync pass outlived the agent")
        try server.faults("{}")
        let before = try XCTUnwrap(try h.transfers().first)
        XCTAssertEqual(before["state"] as? String, "interrupted")
        XCTAssertGreaterThan(before["bytesDone"] as? Int ?? 0, 0)
        // Restarted, the agent holds no key (it died with the old one): it resumes once unlocked.
        try agent.restart()
        XCTAssertEqual(try h.run(["ls"]).status, 3)
        try h.ok(["unlock"] + h.pw)
        XCTAssertNotNil(try waitForServer("big.bin", data), "no resume after the restart: \(agent.log)")
        XCTAssertEqual(server.uploadIds.count, 1, "the same upload session was resumed")
        let status = try server.curl("GET", "/v1/upload/\(server.uploadIds[0])").json
        let received = try XCTUnwrap(status["bytesReceivedTotal"] as? Int)
        print("agent kill -9 resume: server received \(received) bytes for a \(size)-byte file (\(received - size) re-sent)")
        XCTAssertLessThanOrEqual(received, size + 4 * (1 << 20), "re-sent more than the chunks in flight")
    }

    func testAPushEventFromAnotherDeviceTriggersASync() throws {
        try startAgent()
        XCTAssertNotNil(try waitFor(30) { (try agent.status()["events"] as? [String: Any])?["connected"] as? Bool == true },
                        "the push channel did not open: \(agent.log)")
        let passes = try work()["passes"] as? Int ?? 0
        // Another device of the same vault (joined: the account holds the vault's key envelope) uploads a file.
        let other = try CLIHarness(keyring: false)
        try other.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + other.pw)
        try other.ok(["put", try other.localFile("from-b.txt", Data("hello from b".utf8)), "/"] + other.pw)
        try other.ok(["sync"] + other.pw)
        let took = try waitFor(30) {
            let events = try agent.status()["events"] as? [String: Any]
            let ran = try work()["passes"] as? Int ?? 0
            return (events?["events"] as? Int ?? 0) >= 1 && ran > passes
        }
        XCTAssertNotNil(took, "no sync after the other device's change: \(agent.log)")
        print("push event → sync pass after \(took.map { String(format: "%.2f", $0) } ?? "-") s")
        XCTAssertTrue(agent.log.contains("sync wanted: a change on the server (event "), agent.log)
        XCTAssertNotNil((try agent.status()["events"] as? [String: Any])?["lastEventId"] as? String)
    }

    func testThePushChannelReconnectsAfterTheLastEventItSaw() throws {
        try startAgent(["VAULT_AGENT_EVENTS_RETRY_BASE_MS": "100", "VAULT_AGENT_EVENTS_RETRY_CAP_MS": "500"])
        func events() throws -> [String: Any] { try XCTUnwrap(try agent.status()["events"] as? [String: Any]) }
        XCTAssertNotNil(try waitFor(30) { try events()["connected"] as? Bool == true }, agent.log)
        try h.ok(["put", try h.localFile("a.txt", Data("a".utf8)), "/"])
        let seen = try waitFor(30) { try events()["lastEventId"] as? String != nil }
        XCTAssertNotNil(seen, agent.log)
        let last = try XCTUnwrap(try events()["lastEventId"] as? String)
        try server.restart(kill: false)   // the stream ends; the agent comes back with Last-Event-ID
        XCTAssertNotNil(waitFor(30) { agent.log.contains("push channel open (after event \(last))") }, agent.log)
        XCTAssertNotNil(try waitFor(30) { try events()["connected"] as? Bool == true })
    }

    func testTwoCommandsAtOnceDuringABackgroundUploadBothSucceed() throws {
        try startAgent()
        let (big, data) = try randomFile("big.bin", bytes: 24 << 20)
        try server.faults(#"{"delayMs": 200}"#)
        try h.ok(["put", big, "/"])
        XCTAssertNotNil(waitFor(60) { server.chunkLines(status: 308).count >= 2 }, agent.log)
        let small = try h.localFile("small.txt", Data("small".utf8))
        let results = Box<[CLIHarness.Result]>([])
        let group = DispatchGroup()
        for args in [["put", small, "/"], ["status"], ["mkdir", "/docs"]] {
            group.enter()
            DispatchQueue.global().async { [h] in
                if let r = try? h!.run(args) { results.update { $0.append(r) } }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(results.get().count, 3)
        for r in results.get() { XCTAssertEqual(r.status, 0, "\(r.out) \(r.stderr)") }
        try server.faults("{}")
        XCTAssertNotNil(try waitForServer("big.bin", data), agent.log)
        XCTAssertNotNil(try waitForServer("small.txt", Data("small".utf8)), agent.log)
        XCTAssertNotNil(try waitFor(30) { try server.children()["docs"] != nil })
    }

    func testAnOpenBrowserPausesBackgroundWorkOnlyForItsOwnChanges() throws {
        try startAgent()
        try h.ok(["put", try h.localFile("a.txt", Data("a".utf8)), "/"])
        XCTAssertNotNil(try waitForServer("a.txt", Data("a".utf8)), agent.log)
        let t = try TmuxPane(h)
        try t.waitFor("a.txt")
        // The browser's refreshes read beside the agent's passes: an upload goes on meanwhile...
        let (big, data) = try randomFile("big.bin", bytes: 4 << 20)
        try h.ok(["put", big, "/"])
        XCTAssertNotNil(try waitForServer("big.bin", data), "no upload while the browser is open: \(agent.log)")
        // ...and a change made in the browser reaches the server while it stays open.
        try t.waitFor("big.bin")
        try t.press("r")
        try t.waitFor("Rename a.txt to:")
        try t.press("C-u")
        try t.type("b.txt")
        try t.press("Enter")
        try t.waitFor("Renamed to b.txt")
        XCTAssertNotNil(try waitFor(60) { try server.children()["b.txt"] != nil }, "the rename waited for the browser to quit: \(agent.log)")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testMemoryPressureStopsTheUploadWhichResumesAfterwards() throws {
        let events = h.root.appendingPathComponent("memory.events")
        try Data("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n".utf8).write(to: events)
        try startAgent(["VAULT_AGENT_MEMORY_EVENTS": events.path, "VAULT_AGENT_PRESSURE_PAUSE_MS": "1500"])
        let (big, data) = try randomFile("big.bin", bytes: 16 << 20)
        try server.faults(#"{"delayMs": 200}"#)
        try h.ok(["put", big, "/"])
        XCTAssertNotNil(waitFor(60) { server.chunkLines(status: 308).count >= 2 }, agent.log)
        let workerPid = try XCTUnwrap(try work()["workerPid"] as? Int)
        try Data("low 0\nhigh 1\nmax 0\noom 0\noom_kill 0\n".utf8).write(to: events)
        XCTAssertNotNil(try waitFor(20) { try work()["pressureEvents"] as? Int == 1 }, agent.log)
        XCTAssertNotNil(waitFor(10) { kill(pid_t(workerPid), 0) != 0 }, "the pass (and its buffers) did not stop")
        XCTAssertTrue(agent.log.contains("memory pressure"), agent.log)
        try server.faults("{}")
        XCTAssertNotNil(try waitForServer("big.bin", data), "no resume after the pause: \(agent.log)")
    }
}
