import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The real `vault` client through a deployment (issue 22): 2–3 `vault-server` instances on one
/// PostgreSQL database and one shared data folder, behind haproxy round-robin (every request to
/// the next instance), all started by the test on loopback. Two devices sync both ways; `kill -9`
/// of the instance that holds an upload, and a PostgreSQL restart, mid-sync.
final class BalancedDeploymentTests: XCTestCase {
    var a: CLIHarness!
    var b: CLIHarness!
    var server: ServerHarness!

    override func tearDown() { a = nil; b = nil; server = nil }

    func start(instances: Int = 3, serverArgs: [String] = []) throws {
        try XCTSkipUnless(PostgresCluster.available, PostgresCluster.unavailableMessage)
        try XCTSkipUnless(Balancer.available, Balancer.unavailableMessage)
        let url = try PostgresCluster.shared().makeDatabase()
        a = try CLIHarness(keyring: false)
        try a.initVault()
        a.useFastRetry()
        server = try ServerHarness(root: a.root, args: serverArgs, instances: instances, metadata: url)
        try a.login(to: server)
    }

    /// Another device of A's vault (`vault join` through the balancer).
    func device() throws -> CLIHarness {
        let h = try CLIHarness(keyring: false)
        h.useFastRetry()
        try h.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + h.pw)
        return h
    }

    func put(_ h: CLIHarness, _ path: String, _ data: Data, replace: Bool = false) throws {
        let local = try h.localFile(UUID().uuidString, data)
        try h.ok(["put", local, path] + (replace ? ["--replace"] : []) + h.pw)
    }

    func tree(_ h: CLIHarness) throws -> [String: String] { try h.syncTree() }

    /// Parsed request-log lines of instance `i`.
    func logLines(_ i: Int) -> [[String: Any]] {
        server.log(instance: i).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// `vault sync` of `h` in the background, stopped once the instances answered `chunks` chunks 308.
    func backgroundSync(_ h: CLIHarness, afterChunks chunks: Int) throws -> (Process, TransferTests.Collected) {
        let (p, err) = try h.backgroundSync { server.chunkLines(status: 308).count >= chunks }
        let collected = TransferTests.Collected(err)
        XCTAssertTrue(p.isRunning, "vault sync finished before the fault: \(collected.text)")
        return (p, collected)
    }

    func testTwoDevicesSyncBothWaysThroughTheBalancer() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        b = try device()
        let big = TestData.data(5 << 20 + 77, for: name)
        try a.ok(["mkdir", "/docs"] + a.pw)
        try put(a, "/docs/plan.txt", Data("the plan".utf8))
        try put(a, "/big.bin", big)
        try a.ok(["sync"] + a.pw)
        try b.ok(["sync"] + b.pw)
        XCTAssertEqual(try tree(b), try tree(a))
        XCTAssertEqual(try b.ok(["cat", "/docs/plan.txt"] + b.pw).stdout, Data("the plan".utf8))
        XCTAssertEqual(sha256Hex(try b.ok(["cat", "/big.bin"] + b.pw).stdout), sha256Hex(big))

        try b.ok(["mv", "/docs/plan.txt", "/docs/plan-final.txt"] + b.pw)
        try put(b, "/docs/from-b.txt", Data("b's".utf8))
        try put(b, "/big.bin", TestData.data(3 << 20, for: name + " v2"), replace: true)
        try b.ok(["sync"] + b.pw)
        try a.ok(["sync"] + a.pw)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertEqual(try a.ok(["cat", "/docs/from-b.txt"] + a.pw).stdout, Data("b's".utf8))
        try a.ok(["sync"] + a.pw); try b.ok(["sync"] + b.pw)
        XCTAssertEqual(try tree(a), try tree(b), "a second round changes nothing")

        // Round-robin did spread the work: every instance answered requests, and the chunks of
        // one upload went to more than one instance (each took the next chunk another started).
        for i in 0..<3 { XCTAssertFalse(logLines(i).filter { $0["route"] as? String != nil && $0["route"] as? String != "-" }.isEmpty, "instance \(i) served nothing") }
        let chunkInstances = Set((0..<3).filter { i in logLines(i).contains { $0["route"] as? String == "/v1/upload/{id}/chunk" } })
        XCTAssertGreaterThan(chunkInstances.count, 1, "the chunks all went to one instance")
        // The balancer's client address reached the login throttle, and each line names its instance.
        XCTAssertTrue(logLines(1).allSatisfy { $0["instance"] as? String == "vault1" })
    }

    /// `vault sync --watch` through the balancer: its event stream sits on one instance, the
    /// changes are made through others (round-robin), and still each arrives; after `kill -9` of
    /// an instance (perhaps the one holding the stream) the watch reconnects and hears the next.
    func testWatchHearsChangesMadeThroughOtherInstancesAndSurvivesAKill() throws {
        try start()
        b = try device()
        try b.ok(["sync"] + b.pw)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        p.arguments = ["sync", "--watch"] + b.pw
        p.environment = b.env
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let stderr = TransferTests.Collected(err)
        func exists(_ path: String) throws -> Bool { try b.syncTree()[path] != nil }
        try waitUntil("the watch to start", timeout: 30) { stderr.text.contains("Watching for changes") || !p.isRunning }
        for i in 0..<3 {
            try put(a, "/seen-\(i).txt", Data("\(i)".utf8))
            try a.ok(["sync"] + a.pw)
            try waitUntil("B to pull change \(i): \(stderr.text.suffix(300))", timeout: 30) { try exists("/seen-\(i).txt") || !p.isRunning }
        }
        server.kill9(instance: 0)
        try put(a, "/after-kill.txt", Data("k".utf8))
        try a.ok(["sync"] + a.pw)
        try waitUntil("B to pull the change after the kill: \(stderr.text.suffix(300))", timeout: 60) { try exists("/after-kill.txt") || !p.isRunning }
        XCTAssertTrue(p.isRunning, stderr.text)
        XCTAssertEqual(try b.syncTree(), try a.syncTree())
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, stderr.wait())
    }

    /// `kill -9` of the instance that started the upload session, mid-file: the same `vault sync`
    /// carries on through the others (the session and its part file are shared), the same
    /// session completes, and the file's SHA-256 matches.
    func testKillNineOfTheInstanceHoldingAnUploadResumesThroughAnother() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        let size = 16 << 20
        let data = TestData.data(size, for: name)
        try put(a, "/big.bin", data)
        try server.faults(#"{"delayMs": 150}"#)
        let (sync, err) = try backgroundSync(a, afterChunks: 4)
        let holder = try XCTUnwrap((0..<3).first { i in
            logLines(i).contains { $0["method"] as? String == "POST" && $0["route"] as? String == "/v1/upload" && $0["status"] as? Int == 201 }
        }, "no instance logged the session's creation")
        server.kill9(instance: holder)
        try server.faults(#"{"delayMs": 20}"#)
        sync.waitUntilExit()
        let stderr = err.wait()
        XCTAssertEqual(sync.terminationStatus, 0, stderr)
        XCTAssertEqual(try server.children()["big.bin"]?["sha256"] as? String, sha256Hex(data))
        XCTAssertEqual(Set(server.uploadIds).count, 1, "the same session finished on the other instances")
        let status = try server.curl("GET", "/v1/upload/\(server.uploadIds[0])").json
        XCTAssertEqual(status["state"] as? String, "complete")
        let received = try XCTUnwrap(status["bytesReceivedTotal"] as? Int), sent = try XCTUnwrap(status["size"] as? Int)
        print("kill -9 of instance \(holder) mid-upload: the instances received \(received) bytes for a \(sent)-byte sealed file (\(received - sent) re-sent)")
        XCTAssertLessThanOrEqual(received, sent + 4 * (1 << 20), "re-sent more than the chunks in flight")
        let other = (holder + 1) % 3
        XCTAssertTrue(logLines(other).contains { $0["route"] as? String == "/v1/upload/{id}/chunk" }, "another instance took chunks")
    }

    /// `kill -9` of the instance serving a download, mid-file (a slow link holds the body open):
    /// the same `vault get` goes on through another instance from the segments it already has
    /// (a Range request past 0), and the file it writes has the right SHA-256.
    func testKillNineOfTheInstanceServingADownloadResumesThroughAnother() throws {
        try start()
        let data = TestData.data(8 << 20, for: name)
        try put(a, "/big.bin", data)
        try a.ok(["sync"] + a.pw)
        let b = try device()
        try b.ok(["sync"] + b.pw)
        try server.faults(#"{"contentPieceDelayMs": 25}"#)   // 64 KiB every 25 ms: about 3 s for the file
        func serving(from zero: Bool) -> [Int] {
            (0..<3).filter { i in
                logLines(i).contains { ($0["msg"] as? String)?.hasPrefix("test fault: a slow content body started at " + (zero ? "0 " : "")) == true
                    && (zero || ($0["msg"] as? String)?.hasPrefix("test fault: a slow content body started at 0 ") == false) }
            }
        }
        let out = b.tmp.appendingPathComponent("big.out").path
        let (get, pipe) = try b.background(["get", "/big.bin", out]) { !serving(from: true).isEmpty }
        let err = TransferTests.Collected(pipe)
        let holder = try XCTUnwrap(serving(from: true).first, "no instance began to serve the content: \(err.text)")
        Thread.sleep(forTimeInterval: 0.8)   // a part of the file has arrived
        XCTAssertTrue(get.isRunning, "the download finished before the kill")
        server.kill9(instance: holder)
        get.waitUntilExit()
        XCTAssertEqual(get.terminationStatus, 0, err.wait())
        XCTAssertEqual(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: out))), sha256Hex(data))
        let resumedOn = serving(from: false).filter { $0 != holder }
        print("kill -9 of instance \(holder) mid-download: resumed on instance(s) \(resumedOn)")
        XCTAssertFalse(resumedOn.isEmpty, "another instance served the rest from where the first stopped, not from 0")
    }

    /// PostgreSQL restarted while a sync is under way: requests fail for a moment (the instances
    /// answer 5xx, or the balancer does), the client retries, and both devices end with the same
    /// tree and contents.
    func testPostgreSQLRestartedMidSyncClientsRetryAndConverge() throws {
        try start(instances: 2, serverArgs: ["--max-chunk", "1048576"])
        b = try device()
        let big = TestData.data(8 << 20, for: name)
        try put(a, "/big.bin", big)
        for i in 0..<20 { try put(a, "/small-\(i).txt", Data("small \(i)".utf8)) }
        try server.faults(#"{"delayMs": 100}"#)
        let (sync, err) = try backgroundSync(a, afterChunks: 2)
        try PostgresCluster.shared().restart()
        try server.faults("{}")
        sync.waitUntilExit()
        let stderr = err.wait()
        if sync.terminationStatus != 0 {
            // Retries ran out while the database was down: the next sync finishes the job.
            print("the sync during the restart ended with \(sync.terminationStatus): \(stderr.suffix(400))")
            try a.ok(["sync"] + a.pw)
        }
        try b.ok(["sync"] + b.pw)
        XCTAssertEqual(try tree(b), try tree(a))
        XCTAssertEqual(try tree(a).count, 21)
        XCTAssertEqual(sha256Hex(try b.ok(["cat", "/big.bin"] + b.pw).stdout), sha256Hex(big))
        XCTAssertEqual(try server.children()["big.bin"]?["sha256"] as? String, sha256Hex(big))
    }
}

/// `vault-server export` / `import` (issue 22): a deployment moves from the embedded store to
/// PostgreSQL with another data folder, on the same address, and its clients do not notice — no
/// new sign-in, no full listing: the next pull reads only what is new. And back to SQLite, where
/// each client lists its tree once (per-owner cursors cannot be kept in one SQLite feed).
final class StoreMoveTests: XCTestCase {
    var a: CLIHarness!
    var b: CLIHarness!
    var server: ServerHarness!

    override func tearDown() { a = nil; b = nil; server = nil }

    func pull(_ h: CLIHarness) throws -> [String: Any] {
        let r = try h.ok(["sync", "--json"] + h.pw)
        return try XCTUnwrap((r.json as? [String: Any])?["pull"] as? [String: Any], r.out)
    }

    func testAMoveToPostgreSQLAndBackKeepsAccountsContentAndCursors() throws {
        try XCTSkipUnless(PostgresCluster.available, PostgresCluster.unavailableMessage)
        a = try CLIHarness(keyring: false)
        try a.initVault()
        a.useFastRetry()
        server = try ServerHarness(root: a.root, args: ["--max-chunk", "1048576"])
        try a.login(to: server)
        let big = TestData.data(3 << 20 + 5, for: name)
        try a.ok(["mkdir", "/docs"] + a.pw)
        try a.ok(["put", try a.localFile("big.bin", big), "/docs/big.bin"] + a.pw)
        try a.ok(["put", try a.localFile("n.txt", Data("note".utf8)), "/note.txt"] + a.pw)
        try a.ok(["sync"] + a.pw)
        b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        try b.ok(["sync"] + b.pw)
        let before = try b.syncTree()

        let url = try PostgresCluster.shared().makeDatabase()
        try server.move(toMetadata: url, dataDir: a.root.appendingPathComponent("server-data-pg"))
        let logBefore = server.log.count
        try a.ok(["put", try a.localFile("new.txt", Data("after the move".utf8)), "/docs/new.txt"] + a.pw)
        try a.ok(["sync"] + a.pw)
        let moved = try pull(b)
        XCTAssertNotEqual(moved["listed"] as? Bool, true, "a full listing after the move: \(moved)")
        XCTAssertEqual(try b.ok(["cat", "/docs/new.txt"] + b.pw).stdout, Data("after the move".utf8))
        XCTAssertEqual(sha256Hex(try b.ok(["cat", "/docs/big.bin"] + b.pw).stdout), sha256Hex(big), "the content moved")
        XCTAssertEqual(try b.syncTree().count, before.count + 1)
        XCTAssertEqual(try b.syncTree(), try a.syncTree())
        let after = String(server.log.dropFirst(logBefore))
        XCTAssertFalse(after.contains("\"status\":401"), "a token was refused after the move:\n\(after)")
        XCTAssertFalse(after.contains("\"status\":410"), "a cursor expired after the move")

        // Back to the embedded store: the accounts and content again; each client lists once.
        try server.move(toMetadata: nil, dataDir: a.root.appendingPathComponent("server-data-back"))
        try a.ok(["put", try a.localFile("back.txt", Data("back".utf8)), "/back.txt"] + a.pw)
        try a.ok(["sync"] + a.pw)
        let back = try pull(b)
        XCTAssertEqual(back["listed"] as? Bool, true, "\(back)")
        XCTAssertEqual(try b.ok(["cat", "/back.txt"] + b.pw).stdout, Data("back".utf8))
        XCTAssertEqual(try b.syncTree(), try a.syncTree())
        XCTAssertEqual(sha256Hex(try b.ok(["cat", "/docs/big.bin"] + b.pw).stdout), sha256Hex(big))
    }

    /// `vault-server ARGS`: exit status and standard output and error together.
    func serverCommand(_ args: [String]) throws -> (status: Int32, output: String) {
        try toolOutput("/bin/sh", ["-c", #"exec "$0" "$@" 2>&1"#, ServerHarness.binary] + args)
    }

    func testImportRefusesAStoreThatHasUsersAndAnUnfinishedBundle() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("vault-move-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("d").path, bundle = root.appendingPathComponent("bundle").path
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let pw = root.appendingPathComponent("pw").path
        try Data("pw\n".utf8).write(to: URL(fileURLWithPath: pw))
        XCTAssertEqual(try serverCommand(["user", "add", "alice", "--data", data, "--password-file", pw]).status, 0)
        let export = try serverCommand(["export", "--data", data, "--out", bundle])
        XCTAssertEqual(export.status, 0, export.output)
        XCTAssertTrue(export.output.contains("exported 1 users"), export.output)
        let mode = try FileManager.default.attributesOfItem(atPath: bundle)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o700)
        let again = try serverCommand(["export", "--data", data, "--out", bundle])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.output.contains("not empty"), again.output)
        let into = try serverCommand(["import", "--data", data, "--from", bundle])
        XCTAssertEqual(into.status, 1)
        XCTAssertTrue(into.output.contains("already has users"), into.output)
        try FileManager.default.removeItem(atPath: bundle + "/manifest.json")
        let partial = try serverCommand(["import", "--data", root.appendingPathComponent("e").path, "--from", bundle])
        XCTAssertEqual(partial.status, 1)
        XCTAssertTrue(partial.output.contains("not a finished"), partial.output)
    }
}
