import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Login, push (folders, resumable uploads, moves, deletes), downloads on demand, and resuming
/// after `kill -9` and server faults — the real `vault` binary against a real `vault-server`.
final class TransferTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!

    func start(serverArgs: [String] = [], tls: Bool = false) throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        server = try ServerHarness(root: h.root, args: serverArgs, tls: tls)
        h.useFastRetry()
    }

    override func tearDown() {
        server = nil
        h = nil
    }

    func login() throws { try h.login(to: server) }

    func randomFile(_ name: String, bytes: Int) throws -> (String, Data) {
        let data = TestData.data(bytes, for: self.name)
        return (try h.localFile(name, data), data)
    }

    func node(_ path: String) throws -> [String: Any] { try h.node(path) }
    func transfers() throws -> [[String: Any]] { try h.transfers() }

    /// Starts `vault sync` in the background, waits until the server has acknowledged
    /// `chunks` chunks, and kills it with SIGKILL.
    func killSyncAfter(chunks: Int) throws {
        let (p, _) = try backgroundSync(afterChunks: chunks)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
    }

    /// Starts `vault sync` in the background and waits until the server acknowledged `chunks` chunks.
    func backgroundSync(afterChunks chunks: Int) throws -> (Process, Pipe) {
        let (p, err) = try h.backgroundSync { server.chunkLines(status: 308).count >= chunks }
        XCTAssertTrue(p.isRunning, "vault sync finished before it could be stopped")
        return (p, err)
    }

    /// Reads `pipe` to its end on another thread, so a test can wait for a line as it comes;
    /// `wait()` returns everything once the writer has closed it.
    final class Collected: @unchecked Sendable {
        private let data = Box(Data())
        private let done = DispatchGroup()
        init(_ pipe: Pipe) {
            let handle = pipe.fileHandleForReading
            done.enter()
            DispatchQueue.global().async { [data, done] in
                while case let d = handle.availableData, !d.isEmpty { data.update { $0.append(d) } }
                done.leave()
            }
        }
        var text: String { String(decoding: data.get(), as: UTF8.self) }
        func wait() -> String { done.wait(); return text }
    }

    // MARK: - Tests

    func testLoginRefusesWrongPasswordAndDisallowedServerAndKeepsSecretsOutOfOutput() throws {
        try start()
        let wrongPw = try h.localFile("wrong.pw", Data("nope\n".utf8))
        let bad = try h.run(["login", "--server", server.url, "--user", server.user, "--server-password-file", wrongPw] + h.pw)
        XCTAssertEqual(bad.status, 3, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("refused the password"), bad.stderr)
        XCTAssertEqual(try h.run(["sync"] + h.pw).status, 4, "not logged in: sync must say so")

        // A policy listing other servers only.
        try h.usePolicy(#"{"allowedServers": ["https://drive.example.com"]}"#)
        let refused = try h.run(["login", "--server", server.url, "--user", server.user,
                                 "--server-password-file", server.passwordFile.path] + h.pw)
        XCTAssertEqual(refused.status, 11, refused.stderr)
        try h.usePolicy(#"{"allowedServers": ["\#(server.url)"]}"#)

        let ok = try h.ok(["login", "--server", server.url, "--user", server.user,
                           "--server-password-file", server.passwordFile.path] + h.pw)
        XCTAssertTrue(ok.out.contains("Logged in"), ok.out)
        XCTAssertFalse(ok.out.contains(server.password) || ok.stderr.contains(server.password))
        // The token and password live only in the encrypted database.
        let db = try Data(contentsOf: h.home.appendingPathComponent("metadata.db"))
        XCTAssertNil(db.range(of: Data(server.password.utf8)), "server password in plaintext on disk")
        XCTAssertNil(db.range(of: Data(try server.token().prefix(20).utf8)))
        let sync = try h.ok(["sync"] + h.pw)
        XCTAssertTrue(sync.out.contains("Pushed 0 change(s)"), sync.out)
    }

    func testTLSNeedsTheRightCAAndThePolicysPinnedKey() throws {
        try start(tls: true)
        let login = ["login", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + h.pw
        let untrusted = try h.run(login)
        XCTAssertEqual(untrusted.status, 9, "a certificate no CA vouches for is refused: \(untrusted.stderr)")
        let withCA = login + ["--ca-file", server.certFile!.path]

        let policy = h.root.appendingPathComponent("policy.json")
        h.env["VAULT_POLICY_FILE"] = policy.path
        h.env["VAULT_POLICY_KEY_FILE"] = h.root.appendingPathComponent("none.pub").path
        try Data(#"{"pinnedPublicKeys": ["sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]}"#.utf8).write(to: policy)
        let wrongPin = try h.run(withCA)
        XCTAssertEqual(wrongPin.status, 9, "a server key the policy does not pin is refused: \(wrongPin.stderr)")

        try Data(#"{"pinnedPublicKeys": ["\#(server.pin!)"]}"#.utf8).write(to: policy)
        try h.ok(withCA)
        let (f, data) = try randomFile("tls.bin", bytes: 100_000)
        try h.ok(["put", f, "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try server.children()["tls.bin"]?["sha256"] as? String, sha256Hex(data))
    }

    func testRejectedTokenIsRefreshedOnceWithTheStoredPassword() throws {
        try start()
        try login()
        let (f, data) = try randomFile("t.bin", bytes: 50_000)
        try h.ok(["put", f, "/"] + h.pw)
        try server.restartWithNewSigningKey()     // the stored token is now invalid
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try server.children()["t.bin"]?["sha256"] as? String, sha256Hex(data))
        let rejected = server.log.split(separator: "\n").filter { $0.contains("\"status\":401") }
        XCTAssertEqual(rejected.count, 1, "one 401, then a new token and the retry")
    }

    func testPushReplaysFoldersUploadsMovesDeletesAndEvictedContentDownloadsBack() throws {
        try start()
        try login()
        try h.ok(["mkdir", "-p", "/Docs/2026"] + h.pw)
        let (a, aData) = try randomFile("a.bin", bytes: 300_000)
        let (b, _) = try randomFile("b.txt", bytes: 1_000)
        let (empty, _) = try randomFile("empty", bytes: 0)
        try h.ok(["put", a, "/Docs/2026"] + h.pw)
        try h.ok(["put", b, "/"] + h.pw)
        try h.ok(["put", empty, "/Docs"] + h.pw)
        let r = try h.ok(["sync", "--json"] + h.pw)
        let summary = try XCTUnwrap((r.json as? [String: Any])?["push"] as? [String: Any], r.out)
        XCTAssertEqual(summary["done"] as? Int, 5, r.out)

        let docs = try XCTUnwrap(try server.children()["Docs"])
        XCTAssertEqual(docs["type"] as? String, "folder")
        let y2026 = try XCTUnwrap(try server.children(docs["id"] as! String)["2026"])
        let remoteA = try XCTUnwrap(try server.children(y2026["id"] as! String)["a.bin"])
        XCTAssertEqual(remoteA["sha256"] as? String, sha256Hex(aData))
        XCTAssertEqual(try server.contentSHA256(remoteA["id"] as! String), sha256Hex(aData))
        XCTAssertNotNil(try server.children(docs["id"] as! String)["empty"])
        let localA = try node("/Docs/2026/a.bin")
        XCTAssertNil(localA["pendingOp"] as? String)
        XCTAssertEqual(localA["version"] as? Int, remoteA["version"] as? Int)

        // Evict, then cat downloads it back through the server.
        try h.ok(["evict", "/Docs/2026/a.bin"] + h.pw)
        XCTAssertEqual(try node("/Docs/2026/a.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        let cat = try h.ok(["cat", "/Docs/2026/a.bin"] + h.pw)
        XCTAssertEqual(cat.stdout, aData)
        XCTAssertEqual(try node("/Docs/2026/a.bin")["contentState"] as? String, "LOCAL")
        XCTAssertTrue(try transfers().contains { $0["direction"] as? String == "download" && $0["state"] as? String == "done" })
        try h.ok(["evict", "/Docs/2026/a.bin"] + h.pw)
        let exported = h.root.appendingPathComponent("a-exported.bin")
        try h.ok(["get", "/Docs/2026/a.bin", exported.path] + h.pw)
        XCTAssertEqual(try Data(contentsOf: exported), aData, "vault get downloads too")

        // Move, rename and delete are replayed with If-Match.
        try h.ok(["mv", "/b.txt", "/Docs/2026/b-renamed.txt"] + h.pw)
        try h.ok(["rm", "/Docs/empty"] + h.pw)
        try h.ok(["sync"] + h.pw)
        let inYear = try server.children(y2026["id"] as! String)
        XCTAssertNotNil(inYear["b-renamed.txt"])
        XCTAssertNil(try server.children()["b.txt"])
        XCTAssertNil(try server.children(docs["id"] as! String)["empty"], "deleted on the server (trashed)")

        // A change made elsewhere: the server refuses the stale move (If-Match); the pull that
        // follows sees the remote rename, and this device's placement is kept and replayed
        // (docs/sync.md, "rename or move" against "renamed or moved").
        let bId = inYear["b-renamed.txt"]!["id"] as! String
        let patched = try server.curl("PATCH", "/v1/files/\(bId)", json: #"{"name":"by-other-device.txt"}"#)
        XCTAssertEqual(patched.status, 428, "the server insists on If-Match")
        let ver = inYear["b-renamed.txt"]!["version"] as! Int
        XCTAssertEqual(try server.patchSealed(bId, name: "by-other-device.txt", parentId: y2026["id"] as! String, version: ver).status, 200)
        try h.ok(["mv", "/Docs/2026/b-renamed.txt", "/Docs/2026/mine.txt"] + h.pw)
        try h.ok(["sync"] + h.pw)
        let after = try server.children(y2026["id"] as! String)
        XCTAssertEqual(after["mine.txt"]?["id"] as? String, bId, "this device's rename, replayed on the newer version: \(after.keys)")
        XCTAssertNil(after["by-other-device.txt"])
    }

    func testKillNineMidUploadResumesAndResendsAtMostAboutOneChunk() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let size = 24 << 20
        let (big, data) = try randomFile("big.bin", bytes: size)
        try h.ok(["put", big, "/"] + h.pw)
        try server.faults(#"{"delayMs": 200}"#)
        try killSyncAfter(chunks: 8)   // four in flight: two rounds, past the first progress write (0.3 s)
        try server.faults("{}")

        // Progress was persisted before the kill.
        let before = try XCTUnwrap(try transfers().first)
        XCTAssertEqual(before["direction"] as? String, "upload")
        XCTAssertEqual(before["state"] as? String, "interrupted")
        XCTAssertGreaterThan(before["bytesDone"] as? Int ?? 0, 0, "\(before)")
        XCTAssertLessThan(before["bytesDone"] as? Int ?? 0, size)

        let r = try h.ok(["transfers", "resume"] + h.pw)
        XCTAssertTrue(r.out.contains("Synced 1 change(s)"), r.out)
        XCTAssertEqual(server.uploadIds.count, 1, "the same session was resumed")
        let status = try server.curl("GET", "/v1/upload/\(server.uploadIds[0])").json
        XCTAssertEqual(status["state"] as? String, "complete")
        let received = try XCTUnwrap(status["bytesReceivedTotal"] as? Int)
        print("kill -9 resume: server received \(received) bytes for a \(size)-byte file (\(received - (status["size"] as? Int ?? size)) re-sent)")
        // Usually nothing is re-sent. A chunk whose whole body was already in the dead client's
        // socket buffers may still reach the server after the resumed client asked for the status,
        // so the bound is the chunks in flight (4 by default); the benchmark reports the average.
        // (The server counts sent bytes: the sealed blob, a little longer than the plaintext.)
        let sent = try XCTUnwrap(status["size"] as? Int)
        XCTAssertLessThanOrEqual(received, sent + 4 * (1 << 20), "re-sent more than the chunks in flight")
        let remote = try XCTUnwrap(try server.children()["big.bin"])
        XCTAssertEqual(remote["sha256"] as? String, sha256Hex(data))
        let after = try XCTUnwrap(try transfers().first)
        XCTAssertEqual(after["state"] as? String, "done")
        XCTAssertEqual(after["bytesDone"] as? Int, remote["storedSize"] as? Int, "every byte sent: the sealed blob")
    }

    func testLargeUploadsWaitForAnUnmeteredNetworkVisibly() throws {
        try start()
        try login()
        let (big, _) = try randomFile("big.bin", bytes: 2 << 20)
        let (small, _) = try randomFile("small.txt", bytes: 1000)
        try h.ok(["put", big, "/"] + h.pw)
        try h.ok(["put", small, "/"] + h.pw)
        try h.ok(["transfers", "--large-threshold", "1M"] + h.pw)
        let metered = ["VAULT_METERED": "1"]
        var r = try h.run(["sync"] + h.pw, env: metered)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("wait for an unmetered network"), r.stderr)
        XCTAssertNotNil(try server.children()["small.txt"], "small transfers go on")
        XCTAssertNil(try server.children()["big.bin"])
        XCTAssertTrue(try h.ok(["transfers"] + h.pw).out.contains("waiting for an unmetered network"))
        // The policy can forbid the override.
        let policy = h.root.appendingPathComponent("policy.json")
        try Data(#"{"largeTransfersUnmeteredOnly": true}"#.utf8).write(to: policy)
        r = try h.run(["sync", "--allow-metered"] + h.pw,
                      env: metered.merging(["VAULT_POLICY_FILE": policy.path, "VAULT_POLICY_KEY_FILE": policy.path + ".none"]) { $1 })
        XCTAssertEqual(r.status, 11, r.stderr)
        // Without the policy, the user may allow it; or the network becomes unmetered.
        try h.ok(["sync", "--allow-metered"] + h.pw, env: metered)
        XCTAssertNotNil(try server.children()["big.bin"])
    }

    func testPinnedContentDownloadsDuringSync() throws {
        try start()
        try login()
        let (f, data) = try randomFile("pinned.bin", bytes: 300_000)
        try h.ok(["put", f, "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/pinned.bin"] + h.pw)
        XCTAssertEqual(try node("/pinned.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        let p = try h.ok(["pin", "/pinned.bin"] + h.pw, env: ["VAULT_BACKGROUND_DOWNLOADS": "0"])
        XCTAssertTrue(p.out.contains("downloads with `vault sync` or `vault pin --wait`"), p.out)
        let r = try h.ok(["sync"] + h.pw)
        XCTAssertTrue(r.out.contains("Downloaded 1 pinned file(s)"), r.out)
        XCTAssertEqual(try node("/pinned.bin")["contentState"] as? String, "LOCAL")
        try server.faults(#"{"errorRate": 1.0, "errorStatus": 503}"#)      // now offline-ish: content is local
        XCTAssertEqual(try h.ok(["cat", "/pinned.bin"] + h.pw).stdout, data)
        try server.faults("{}")
    }

    func testPauseCancelAndResumeUploads() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let (a, _) = try randomFile("a.txt", bytes: 1000)
        let (big, bigData) = try randomFile("big.bin", bytes: 12 << 20)
        try h.ok(["put", a, "/"] + h.pw)
        try h.ok(["put", big, "/"] + h.pw)
        try h.ok(["transfers", "pause", "/a.txt"] + h.pw)
        try server.faults(#"{"delayMs": 120}"#)
        try killSyncAfter(chunks: 3)                 // big.bin is part-way on the server
        try server.faults("{}")
        XCTAssertNil(try server.children()["a.txt"], "a paused upload is not sent")
        let uploadId = try XCTUnwrap(server.uploadIds.last)
        XCTAssertEqual(try server.curl("GET", "/v1/upload/\(uploadId)").status, 200)
        try h.ok(["transfers", "cancel", "/big.bin"] + h.pw)
        XCTAssertEqual(try server.curl("GET", "/v1/upload/\(uploadId)").status, 404, "cancel aborts the server session")
        let r = try h.ok(["sync"] + h.pw)
        XCTAssertTrue(r.stderr.contains("paused or cancelled"), r.stderr)
        XCTAssertNil(try server.children()["big.bin"])
        XCTAssertEqual(try h.ok(["cat", "/big.bin"] + h.pw).stdout, bigData, "the file stays in the vault")
        try h.ok(["transfers", "resume", "/big.bin"] + h.pw)
        XCTAssertEqual(try server.children()["big.bin"]?["sha256"] as? String, sha256Hex(bigData))
        XCTAssertNil(try server.children()["a.txt"], "still paused")
        try h.ok(["transfers", "resume"] + h.pw)
        XCTAssertNotNil(try server.children()["a.txt"])
        XCTAssertEqual(try h.run(["transfers", "pause", "/a.txt"] + h.pw).status, 4, "nothing left to pause")
    }

    /// `vault transfers` lists, pauses and cancels beside a running `vault sync`: the list shows
    /// the upload running, a pause stops it within a second or so and keeps what the server holds,
    /// a cancel frees the server's session; ordinary commands still wait for the sync.
    func testTransfersListPauseAndCancelBesideARunningSync() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let size = 32 << 20   // 1 MiB chunks, 4 in flight, 0.4 s per answer: ~3 s of sync
        let (big, bigData) = try randomFile("big.bin", bytes: size)
        try h.ok(["put", big, "/"] + h.pw)
        try server.faults(#"{"delayMs": 400}"#)
        var (sync, err) = try backgroundSync(afterChunks: 2)

        let running = try XCTUnwrap(try transfers().first)
        XCTAssertEqual(running["state"] as? String, "running", "\(running)")
        XCTAssertEqual(running["path"] as? String, "/big.bin")
        let busy = try h.run(["mkdir", "/later"] + h.pw, env: ["VAULT_LOCK_TIMEOUT": "0.5"])
        XCTAssertEqual(busy.status, 7, "a command that changes the vault still waits for the sync")
        XCTAssertTrue(busy.stderr.contains("a `vault sync` or download (pid"), busy.stderr)
        XCTAssertTrue(busy.stderr.contains("`vault transfers` shows its progress"), busy.stderr)
        XCTAssertNotNil(try node("/big.bin"), "ls works beside the sync")

        let t0 = Date()
        let paused = try h.ok(["transfers", "pause", "/big.bin"] + h.pw)
        XCTAssertTrue(paused.out.contains("Paused the upload of /big.bin."), paused.out)
        XCTAssertFalse(paused.out.contains("has not stopped it yet"), paused.out)
        sync.waitUntilExit()
        print("pause beside a running sync took \(Date().timeIntervalSince(t0)) s")
        var stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(sync.terminationStatus, 0, stderr)
        XCTAssertTrue(stderr.contains("paused the upload of /big.bin"), stderr)
        XCTAssertEqual(try transfers().first?["state"] as? String, "paused")
        XCTAssertNil(try server.children()["big.bin"])
        let uploadId = try XCTUnwrap(server.uploadIds.last)
        XCTAssertEqual(try server.curl("GET", "/v1/upload/\(uploadId)").json["state"] as? String, "active", "the session is kept")

        try server.faults("{}")
        try h.ok(["transfers", "resume", "/big.bin"] + h.pw)
        XCTAssertEqual(try server.children()["big.bin"]?["sha256"] as? String, sha256Hex(bigData))
        let received = try XCTUnwrap(try server.curl("GET", "/v1/upload/\(uploadId)").json["bytesReceivedTotal"] as? Int)
        XCTAssertLessThanOrEqual(received, size + (1 << 20), "a pause costs at most about one chunk")

        // Cancel beside a running sync: the sync stops, the server session is freed, the file stays.
        let (c, cData) = try randomFile("c.bin", bytes: size)
        try h.ok(["put", c, "/"] + h.pw)
        try server.faults(#"{"delayMs": 400}"#)
        let before = server.chunkLines(status: 308).count
        (sync, err) = try backgroundSync(afterChunks: before + 2)
        let cancelled = try h.ok(["transfers", "cancel", "/c.bin"] + h.pw)
        XCTAssertTrue(cancelled.out.contains("Cancelled the upload of /c.bin"), cancelled.out)
        sync.waitUntilExit()
        stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(sync.terminationStatus, 0, stderr)
        XCTAssertTrue(stderr.contains("cancelled the upload of /c.bin"), stderr)
        let cId = try XCTUnwrap(server.uploadIds.last)
        XCTAssertNotEqual(cId, uploadId)
        XCTAssertEqual(try server.curl("GET", "/v1/upload/\(cId)").status, 404, "the cancelled session is freed")
        // The cancelled upload stays visible, and agrees with the node and the outbox (issue 9 item 14).
        let cancelledRow = try XCTUnwrap(try transfers().first { $0["path"] as? String == "/c.bin" })
        XCTAssertEqual(cancelledRow["state"] as? String, "cancelled", "\(cancelledRow)")
        XCTAssertEqual(try node("/c.bin")["pendingOp"] as? String, "upload")
        let status = try XCTUnwrap(try h.ok(["status", "--json"] + h.pw).json as? [String: Any])
        XCTAssertEqual((status["changes"] as? [String: Any])?["held"] as? Int, 1, "\(status)")
        XCTAssertTrue(try h.ok(["transfers"] + h.pw).out.contains("cancelled, awaiting upload"))
        try server.faults("{}")
        try h.ok(["transfers", "resume", "/c.bin"] + h.pw)
        XCTAssertEqual(try server.children()["c.bin"]?["sha256"] as? String, sha256Hex(cData))
        XCTAssertEqual(try h.run(["transfers", "pause", "/c.bin"] + h.pw).status, 4, "nothing left to pause")
    }

    /// `vault pin` of a folder whose content is only on the server returns at once and downloads
    /// it in the background: `ls` and `vault transfers` work meanwhile and show it, and the files
    /// become local; `--wait` downloads in the foreground instead.
    func testPinDownloadsInTheBackground() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        try h.ok(["mkdir", "/docs"] + h.pw)
        let (a, aData) = try randomFile("a.bin", bytes: 3 << 20)
        let (b, bData) = try randomFile("b.bin", bytes: 2 << 20)
        try h.ok(["put", a, "/docs"] + h.pw)
        try h.ok(["put", b, "/docs"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/docs/a.bin"] + h.pw)
        try h.ok(["evict", "/docs/b.bin"] + h.pw)
        try server.faults(#"{"delayMs": 1000}"#)
        let t0 = Date()
        let r = try h.ok(["pin", "/docs"] + h.pw)
        XCTAssertTrue(r.out.contains("Downloading 2 file(s), 5.0 MiB in the background"), r.out)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 5, "pin returns without waiting for the download")
        var sawRunning = false
        _ = try eventually(within: 60) {
            let list = try transfers()
            if list.contains(where: { $0["direction"] as? String == "download" && $0["state"] as? String == "running" }) { sawRunning = true }
            let states = try ["a.bin", "b.bin"].map { try node("/docs/\($0)")["contentState"] as? String }
            return states.allSatisfy { $0 == "LOCAL" }
        }
        XCTAssertTrue(sawRunning, "vault transfers showed the background download running")
        XCTAssertEqual(try node("/docs/a.bin")["contentState"] as? String, "LOCAL")
        XCTAssertEqual(try node("/docs/b.bin")["contentState"] as? String, "LOCAL")
        try server.faults("{}")
        XCTAssertEqual(try h.ok(["cat", "/docs/a.bin"] + h.pw).stdout, aData)

        try h.ok(["unpin", "/docs"] + h.pw)
        try h.ok(["evict", "/docs/b.bin"] + h.pw)
        let w = try h.ok(["pin", "/docs/b.bin", "--wait"] + h.pw)
        XCTAssertTrue(w.out.contains("Downloaded 1 file(s)."), w.out)
        XCTAssertEqual(try node("/docs/b.bin")["contentState"] as? String, "LOCAL")
        XCTAssertEqual(try h.ok(["cat", "/docs/b.bin"] + h.pw).stdout, bData)
        XCTAssertTrue(try h.ok(["sync", "--pinned-only"] + h.pw).out.contains("No pinned content to download."))
    }

    /// A server that stops reading (a stall longer than `VAULT_SYNC_STALL_SECONDS`) and then a
    /// server killed and restarted mid-upload: the same `vault sync` rides out both and finishes
    /// the same session, re-sending at most about one chunk.
    func testStalledAndRestartedServerMidUpload() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let size = 32 << 20
        let (f, data) = try randomFile("s.bin", bytes: size)
        try h.ok(["put", f, "/"] + h.pw)
        h.env["VAULT_SYNC_STALL_SECONDS"] = "1"
        try server.faults(#"{"delayMs": 150}"#)
        let (sync, err) = try backgroundSync(afterChunks: 4)
        let stderrSoFar = Collected(err)
        // The server stops reading request bodies for 12 s. libcurl averages the speed over a few
        // seconds, so a chunk that went out at once is seen as stalled some 5 s after the 1 s limit.
        try server.faults(#"{"delayMs": 12000}"#)
        try waitUntil("vault sync to see the transfer stall", timeout: 60) { stderrSoFar.text.contains("transfer stalled") || !sync.isRunning }
        try server.faults(#"{"delayMs": 150}"#)
        let before = server.chunkLines(status: 308).count
        _ = eventually(within: 30) { server.chunkLines(status: 308).count >= before + 4 || !sync.isRunning }
        try server.restart(kill: true)                      // kill -9 mid-upload, same data, same port
        try server.faults(#"{"delayMs": 50}"#)
        sync.waitUntilExit()
        let stderr = stderrSoFar.wait()
        XCTAssertEqual(sync.terminationStatus, 0, stderr)
        XCTAssertTrue(stderr.contains("transfer stalled"), stderr)
        XCTAssertEqual(try server.children()["s.bin"]?["sha256"] as? String, sha256Hex(data))
        XCTAssertEqual(Set(server.uploadIds).count, 1, "the same session was resumed across the stall and the restart")
        let received = try XCTUnwrap(try server.curl("GET", "/v1/upload/\(server.uploadIds[0])").json["bytesReceivedTotal"] as? Int)
        print("stall + server restart: server received \(received) bytes for a \(size)-byte file")
        XCTAssertLessThanOrEqual(received, size + 4 * (1 << 20), "at most the chunks in flight when the server died")
    }

    func testKillNineMidDownloadResumesFromTheSealedPartial() throws {
        try start()
        try login()
        let (f, data) = try randomFile("dl.bin", bytes: 16 << 20)
        try h.ok(["put", f, "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/dl.bin"] + h.pw)
        // Killed (SIGKILL) once more than 4 MiB have arrived.
        let killed = try h.run(["cat", "/dl.bin"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "download-midway"])
        XCTAssertEqual(killed.status, 9, killed.stderr)
        XCTAssertEqual(try node("/dl.bin")["contentState"] as? String, "NOT_DOWNLOADED", "nothing published by the killed download")
        // Its progress was persisted before the kill (issue 9 item 14): shown, interrupted.
        let row = try XCTUnwrap(try transfers().first { $0["direction"] as? String == "download" })
        XCTAssertEqual(row["state"] as? String, "interrupted", "\(row)")
        XCTAssertGreaterThan(row["bytesDone"] as? Int ?? 0, 0, "\(row)")
        let partials = try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path)
        XCTAssertEqual(partials.count, 1, "the sealed partial download is kept")
        try h.ok(["doctor"] + h.pw)   // keeps it: an unfinished download still owns it
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path), partials)
        let again = try h.ok(["cat", "/dl.bin"] + h.pw)
        XCTAssertEqual(again.stdout, data)
        XCTAssertTrue(again.stderr.contains("resuming the download at"), again.stderr)
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("Checked"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path), [])
    }

    func testTheStagedCopyUploadsEvenIfTheSourceChangesOrVanishes() throws {
        try start()
        try login()
        let (f, original) = try randomFile("doc.bin", bytes: 200_000)
        try h.ok(["put", f, "/"] + h.pw)
        try Data(repeating: 0x42, count: 5).write(to: URL(fileURLWithPath: f))   // changed after put
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try server.children()["doc.bin"]?["sha256"] as? String, sha256Hex(original))
        try FileManager.default.removeItem(atPath: f)                            // and gone
        try h.ok(["evict", "/doc.bin"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/doc.bin"] + h.pw).stdout, original)
    }

    /// A download that cannot fit on a full disk is refused before it starts, clearly, and the
    /// vault stays intact; with room again it completes.
    func testFullDiskDuringDownload() throws {
        let mnt = FileManager.default.temporaryDirectory.appendingPathComponent("vault-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mnt, withIntermediateDirectories: true)
        defer { _ = try? runTool("/bin/umount", [mnt.path]); try? FileManager.default.removeItem(at: mnt) }
        guard getuid() == 0, (try? runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=40m", "tmpfs", mnt.path])) == 0 else {
            throw XCTSkip("needs root and tmpfs mounts")
        }
        h = try CLIHarness(keyring: false)
        h.env["VAULT_HOME"] = mnt.appendingPathComponent("vault").path
        h.useFastRetry()
        try h.initVault()
        server = try ServerHarness(root: h.root, args: [], tls: false)
        try login()
        let (f, data) = try randomFile("fits.bin", bytes: 12 << 20)
        try h.ok(["put", f, "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/fits.bin"] + h.pw)
        // Fill the disk so the download no longer fits: refused before any byte is fetched.
        let filler = mnt.appendingPathComponent("filler")
        _ = try? runTool("/usr/bin/fallocate", ["-l", "24M", filler.path])
        let r = try h.run(["cat", "/fits.bin"] + h.pw)
        XCTAssertEqual(r.status, 8, r.stderr)
        XCTAssertTrue(r.stderr.contains("not enough free space"), r.stderr)
        XCTAssertEqual(try node("/fits.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        try FileManager.default.removeItem(at: filler)
        XCTAssertEqual(try h.ok(["cat", "/fits.bin"] + h.pw).stdout, data)
        try h.ok(["doctor", "--verify"] + h.pw)
    }

    func testServerLyingAboutReceivedRangesIsNeverTakenAsDone() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let (big, data) = try randomFile("lie.bin", bytes: 24 << 20)   // far more than the chunks in flight when killed
        try h.ok(["put", big, "/"] + h.pw)
        try server.faults(#"{"delayMs": 120}"#)
        try killSyncAfter(chunks: 2)
        try server.faults(#"{"lieReceivedRanges": true}"#)
        let r = try h.run(["sync"] + h.pw, env: ["VAULT_RETRY_MAX": "3"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("has not published the file"), r.stderr)
        XCTAssertEqual(try node("/lie.bin")["pendingOp"] as? String, "upload", "nothing taken as uploaded")
        XCTAssertNil(try server.children()["lie.bin"])
        try server.faults("{}")
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try server.children()["lie.bin"]?["sha256"] as? String, sha256Hex(data))
    }

    func testUploadSurvivesDroppedConnections429sAnd503Bursts() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let (one, oneData) = try randomFile("one.bin", bytes: 5 << 20)
        try h.ok(["put", one, "/"] + h.pw)
        // (Each instance of a deployment answers its own next two requests 429: the waits may overlap.)
        try server.faults(#"{"dropAfterBytes": 300000, "dropCount": 2, "retryAfter429Count": 2, "retryAfterSeconds": 2}"#)
        let t0 = Date()
        let r = try h.ok(["sync"] + h.pw)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(t0), 2, "the 429s with Retry-After: 2 were honoured")
        XCTAssertTrue(r.stderr.contains("429"), r.stderr)
        XCTAssertEqual(try server.children()["one.bin"]?["sha256"] as? String, sha256Hex(oneData))

        let (two, twoData) = try randomFile("two.bin", bytes: 6 << 20)
        try h.ok(["put", two, "/"] + h.pw)
        // Four chunks in flight at once, through a burst of 503s and then two dropped connections.
        try server.faults(#"{"errorRate": 1.0, "errorStatus": 503}"#)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        p.arguments = ["sync", "--concurrency", "4"] + h.pw
        p.environment = h.env
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let stderrSoFar = Collected(err)
        try waitUntil("vault sync to meet the 503s") { stderrSoFar.text.contains("server answered 503") || !p.isRunning }
        try server.faults(#"{"errorRate": 0.2, "errorStatus": 503, "dropAfterBytes": 200000, "dropCount": 2, "errorSeed": \#(TestSeed.make(self.name) & UInt64(Int64.max))}"#)
        let stderr = stderrSoFar.wait()
        p.waitUntilExit()
        try server.faults("{}")
        XCTAssertEqual(p.terminationStatus, 0, stderr)
        XCTAssertTrue(stderr.contains("server answered 503"), stderr)
        XCTAssertEqual(try server.children()["two.bin"]?["sha256"] as? String, sha256Hex(twoData))
        let id = try XCTUnwrap(server.uploadIds.last)
        let received = try XCTUnwrap(try server.curl("GET", "/v1/upload/\(id)").json["bytesReceivedTotal"] as? Int)
        print("drops with 4 chunks in flight: server received \(received) bytes for a \(6 << 20)-byte file")
        XCTAssertLessThanOrEqual(received, (6 << 20) + (1 << 20), "cut-off chunks keep their prefix: at most about one chunk re-sent")
    }

    func testGivingUpLeavesAVisibleWaitingTransferThatResumesLater() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let (f, data) = try randomFile("w.bin", bytes: 3 << 20)
        try h.ok(["put", f, "/"] + h.pw)
        try server.faults(#"{"errorRate": 1.0, "errorStatus": 503, "errorPathPrefix": "/v1/upload"}"#)
        let r = try h.run(["sync"] + h.pw, env: ["VAULT_RETRY_MAX": "3"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("stopped after 3 failed attempts"), r.stderr)
        let t = try XCTUnwrap(try transfers().first)
        XCTAssertEqual(t["state"] as? String, "waiting_to_retry")
        XCTAssertNotNil(t["nextAttemptAt"] as? Int)
        XCTAssertTrue((t["error"] as? String ?? "").contains("503"), "\(t)")
        let text = try h.ok(["transfers"] + h.pw).out
        XCTAssertTrue(text.contains("waiting to retry at"), text)

        try server.faults("{}")
        try h.ok(["transfers", "resume"] + h.pw)
        XCTAssertEqual(try server.children()["w.bin"]?["sha256"] as? String, sha256Hex(data))
        XCTAssertEqual(try transfers().first?["state"] as? String, "done")
    }

    func testExpiredSessionStartsAFreshOne() throws {
        try start(serverArgs: ["--max-chunk", "1048576"])
        try login()
        let (f, data) = try randomFile("f.bin", bytes: 24 << 20)
        try h.ok(["put", f, "/"] + h.pw)
        try server.faults(#"{"delayMs": 120}"#)
        try killSyncAfter(chunks: 2)
        try server.faults(#"{"expireSessionsNow": true}"#)
        let r = try h.ok(["sync"] + h.pw)
        XCTAssertTrue(r.stderr.contains("starting a new one"), r.stderr)
        XCTAssertEqual(server.uploadIds.count, 2)
        XCTAssertEqual(try server.children()["f.bin"]?["sha256"] as? String, sha256Hex(data))
    }

    func testServerLyingAboutContentIsRejectedAndNothingPublished() throws {
        try start()
        try login()
        let (f, _) = try randomFile("doc.bin", bytes: 200_000)
        try h.ok(["put", f, "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/doc.bin"] + h.pw)
        // The server's stored bytes change behind its own checksum.
        let remote = try XCTUnwrap(try server.children()["doc.bin"])
        let rev = try XCTUnwrap(remote["headRevisionId"] as? String)
        try server.damageStoredContent(revision: rev, at: 1000)

        let r = try h.run(["cat", "/doc.bin"] + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertTrue(r.stderr.contains("failed its integrity check"), r.stderr)
        XCTAssertTrue(r.stdout.isEmpty, "nothing of the bad content reached the reader")
        XCTAssertEqual(try node("/doc.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        XCTAssertEqual(try h.blobFiles("cache").count, 0, "the bad blob was discarded")
        XCTAssertTrue(try transfers().contains { $0["state"] as? String == "failed" })
    }
}
