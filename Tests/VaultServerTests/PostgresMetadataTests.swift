import Foundation
import VaultPostgres
@testable import VaultServer
import VaultTestSupport
import XCTest

/// Two `vault-server` processes on one PostgreSQL database (`--metadata postgresql://…`), each with
/// its own data folder: what one machine's lock used to guarantee now holds across servers. And the
/// `migrate` and `user` commands with `--metadata`.
final class PostgresMetadataTests: XCTestCase {
    private var url = ""

    override func setUpWithError() throws {
        try XCTSkipUnless(PostgresCluster.available, PostgresCluster.unavailableMessage)
        url = try PostgresCluster.shared().makeDatabase()
    }

    /// Two servers: alice and bob created through the first; the second shares its database.
    private func twoServers() throws -> (ServerProcess, ServerProcess) {
        let a = try ServerProcess(metadata: url)
        let b = try ServerProcess(users: [], metadata: url)
        return (a, b)
    }

    func testTwoServersRacingForOneNameGiveOne201AndOne409() throws {
        let (a, b) = try twoServers()
        let users = [try APIUser(a, "alice"), try APIUser(b, "alice")]
        for round in 0..<20 {
            let statuses = Locked([Int]())
            runConcurrently(2) { i in
                let r = try? users[i].json("POST", "/v1/files", ["name": "race-\(round)", "parentId": "root", "type": "folder"])
                statuses.withLock { $0.append(r?.status ?? -1) }
            }
            XCTAssertEqual(statuses.withLock { $0 }.sorted(), [201, 409], "round \(round)")
        }
        let list = try users[1].send("GET", "/v1/files?parentId=root&limit=1000")
        XCTAssertEqual((list.json["files"] as? [[String: Any]])?.count, 20)
        a.assertStillServing(users[0]); b.assertStillServing(users[1])
    }

    /// Writers on both servers while a reader follows the feed by cursor: every change appears
    /// once, in cursor order, with no gap (cursors of one owner are 1, 2, 3, …), and what the
    /// reader saw while the writes went on is exactly the feed read again afterwards.
    func testConcurrentWritersOnTwoServersLeaveNoGapOrReorderInTheFeed() throws {
        let (a, b) = try twoServers()
        let reader = try APIUser(a, "alice")
        let start = try reader.send("GET", "/v1/changes/start").json["cursor"] as? Int ?? -1
        XCTAssertEqual(start, 0, "a new owner's feed starts at 0 with per-owner numbering")
        let writers = [try APIUser(a, "alice"), try APIUser(b, "alice")]
        let perWriter = 15, threads = 4
        let done = Locked(false)
        let seen = Locked([Int]())
        let follower = Thread {
            var cursor = start
            while true {
                let finished = done.withLock { $0 }
                guard let r = try? reader.send("GET", "/v1/changes?cursor=\(cursor)&limit=7") else { continue }
                let changes = r.json["changes"] as? [[String: Any]] ?? []
                seen.withLock { $0 += changes.compactMap { $0["cursor"] as? Int } }
                cursor = r.json["nextCursor"] as? Int ?? cursor
                if finished && changes.isEmpty { break }
            }
            done.withLock { $0 = false }
        }
        follower.start()
        runConcurrently(threads) { t in
            for i in 0..<perWriter {
                _ = try? writers[t % 2].json("POST", "/v1/files", ["name": "w\(t)-\(i)", "parentId": "root", "type": "folder"])
            }
        }
        done.withLock { $0 = true }
        try waitUntil("the follower to read to the end", timeout: 60) { !done.withLock { $0 } }
        let total = threads * perWriter
        XCTAssertEqual(seen.withLock { $0 }, Array(1...total), "the follower saw a gap, a repeat or a reorder")
        let all = try reader.send("GET", "/v1/changes?cursor=0&limit=1000").json["changes"] as? [[String: Any]] ?? []
        XCTAssertEqual(all.compactMap { $0["cursor"] as? Int }, Array(1...total))
    }

    /// Writes of different owners do not wait for each other, on one server or across two: while
    /// a transaction holds alice's write locks (those a write of hers takes on any server), bob's
    /// writes through both servers commit, and alice's own write waits for it, then commits.
    func testAnOwnersOpenWriteHoldsBackOnlyThatOwner() throws {
        let (a, b) = try twoServers()
        let alice = try APIUser(a, "alice")
        let bobs = [try APIUser(a, "bob"), try APIUser(b, "bob")]
        let holder = try PostgresConnection(url: url)
        let aliceId = try XCTUnwrap(holder.scalar(String.self, "SELECT id FROM users WHERE name = ?", ["alice"]))
        try holder.execute("BEGIN")
        for (sql, key) in MetadataStore.lockStatements(.owner(aliceId)) { try holder.run(sql, [key]) }
        let aliceStatus = Locked<Int?>(nil)
        let writer = Thread {
            let r = try? alice.json("POST", "/v1/files", ["name": "after-the-lock", "parentId": "root", "type": "folder"])
            aliceStatus.withLock { $0 = r?.status ?? -1 }
        }
        writer.start()
        try waitUntil("alice's write to wait for her lock") {
            try holder.scalar(Int.self, """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """) == 1
        }
        for (i, bob) in bobs.enumerated() {
            let r = try bob.json("POST", "/v1/files", ["name": "bob-\(i)", "parentId": "root", "type": "folder"])
            XCTAssertEqual(r.status, 201, r.text)
        }
        XCTAssertNil(aliceStatus.withLock { $0 }, "alice's write went ahead while her lock was held")
        try holder.execute("COMMIT")
        try waitUntil("alice's write to commit") { aliceStatus.withLock { $0 } != nil }
        XCTAssertEqual(aliceStatus.withLock { $0 }, 201)
    }

    /// A database host that drops packets: `migrate` (as every command that opens the store)
    /// gives up after the connect timeout with what to check, instead of hanging.
    func testADatabaseHostThatDropsPacketsFailsWithinTheConnectTimeout() throws {
        let silent = try SilentPort()
        let r = try ServerProcess.runCapturing(["migrate", "--metadata", "postgresql://vault:x@127.0.0.1:\(silent.port)/db?connect_timeout=2"])
        XCTAssertEqual(r.code, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("did not answer in time"), r.stderr)
    }

    /// Failed logins counted on one server hold back the attempts on the other (the counts are
    /// rows of the shared database, not memory of either process), known addresses included.
    func testLoginBackoffHoldsAcrossServers() throws {
        let args = ["--login-user-failures", "3", "--login-base-delay", "60"]
        let a = try ServerProcess(args: args, metadata: url)
        let b = try ServerProcess(args: args, users: [], metadata: url)
        XCTAssertEqual(try a.login("alice", "pw-alice", from: "127.0.0.2").status, 200, "alice's usual address")
        for (i, s) in [a, b, a].enumerated() {
            XCTAssertEqual(try s.login("alice", "guess", from: "127.0.0.3").status, 401, "guess \(i)")
        }
        XCTAssertEqual(try b.login("alice", "guess", from: "127.0.0.3").status, 429, "held back on the other server too")
        XCTAssertEqual(try a.login("alice", "pw-alice", from: "127.0.0.4").status, 429, "a new address waits on either")
        XCTAssertEqual(try b.login("alice", "pw-alice", from: "127.0.0.2").status, 200, "the address known on a is known on b")
    }

    /// With its database gone the server is alive but not ready: `/readyz` 503 names the store (and
    /// never its password), `/healthz` still 200, so a balancer takes it out without restarting it.
    func testReadyzIs503WhileTheDatabaseIsDown() throws {
        let cluster = try PostgresCluster()   // its own: this test stops it for good
        let s = try ServerProcess(metadata: try cluster.makeDatabase())
        XCTAssertEqual(try s.client.send("GET", "/readyz").status, 200)
        cluster.stop()
        let down = try s.client.send("GET", "/readyz")
        XCTAssertEqual(down.status, 503, down.text)
        XCTAssertEqual(down.errorCode, "not_ready")
        XCTAssertTrue(down.text.contains("metadata store"), down.text)
        XCTAssertFalse(down.text.contains(PostgresCluster.password), "no password in the answer")
        XCTAssertEqual(try s.client.send("GET", "/healthz").status, 200)
    }

    func testMigrateAndUserCommandsTakeMetadata() throws {
        let first = try ServerProcess.runCapturing(["migrate", "--metadata", url])
        XCTAssertEqual(first.code, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("metadata schema version 3"), first.stdout)
        XCTAssertEqual(try ServerProcess.runCapturing(["migrate", "--metadata", url]).code, 0, "migrating twice is a no-op")
        let dir = NSTemporaryDirectory() + "pg-cli-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let add = try ServerProcess.runCapturing(["user", "add", "carol", "--data", dir, "--metadata", url], stdin: "pw-carol\n")
        XCTAssertEqual(add.code, 0, add.stderr)
        let list = try ServerProcess.runCapturing(["user", "list", "--data", dir, "--metadata", url])
        XCTAssertTrue(list.stdout.hasPrefix("carol\t"), list.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/meta.db"), "no SQLite file when --metadata is PostgreSQL")
        // The same user again is the same refusal as on SQLite.
        let again = try ServerProcess.runCapturing(["user", "add", "carol", "--data", dir, "--metadata", url], stdin: "pw\n")
        XCTAssertEqual(again.code, 1); XCTAssertTrue(again.stderr.contains("carol exists"), again.stderr)

        let wrong = url.replacingOccurrences(of: PostgresCluster.password, with: "not-it")
        let refused = try ServerProcess.runCapturing(["migrate", "--metadata", wrong])
        XCTAssertEqual(refused.code, 1)
        XCTAssertTrue(refused.stderr.contains("refused the user or password"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("not-it"), "the password never appears in messages")

        let sqlite = try ServerProcess.runCapturing(["migrate", "--data", dir])
        XCTAssertEqual(sqlite.code, 0, sqlite.stderr)
        XCTAssertTrue(sqlite.stdout.contains("\(dir)/meta.db: metadata schema version 6"), sqlite.stdout)
    }

    /// PostgreSQL restarted under a running server: reads go on at once (a read meeting the
    /// dropped connection runs again), a write fails at most once (5xx, nothing half-done) and
    /// the next one succeeds.
    func testAServerCarriesOnAfterPostgreSQLRestarts() throws {
        let s = try ServerProcess(metadata: url)
        let u = try APIUser(s, "alice")
        _ = try u.mkdir("before")
        try PostgresCluster.shared().restart()
        XCTAssertEqual(try u.send("GET", "/v1/files?parentId=root").status, 200)
        let first = try u.json("POST", "/v1/files", ["name": "after", "parentId": "root", "type": "folder"]).status
        if first != 201 {
            XCTAssertGreaterThanOrEqual(first, 500)
            XCTAssertEqual(try u.json("POST", "/v1/files", ["name": "after", "parentId": "root", "type": "folder"]).status, 201)
        }
        let names = (try u.send("GET", "/v1/files?parentId=root").json["files"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        XCTAssertEqual(names?.sorted(), ["after", "before"])
        s.assertStillServing(u)
    }

    /// The doorbell: a change committed through one server wakes an event stream open on the other
    /// (LISTEN/NOTIFY carries `owner:cursor`; the stream says only the cursor).
    func testAChangeOnOneServerReachesAnEventStreamOnTheOther() throws {
        let (a, b) = try twoServers()
        let writer = try APIUser(a, "alice"), listener = try APIUser(b, "alice")
        let fd = try b.client.connect(timeout: 10)
        defer { close(fd) }
        try b.client.writeAll(fd, b.client.requestHead("GET", "/v1/events", headers: ["Authorization": "Bearer \(listener.token)"], bodyLength: nil))
        var text = ""
        XCTAssertTrue(b.client.read(fd, until: ": connected", into: &text, timeout: 5), text)
        _ = try writer.mkdir("rung")
        XCTAssertTrue(b.client.read(fd, until: "event: changed", into: &text, timeout: 10), text)
        XCTAssertTrue(b.client.read(fd, until: "\"cursor\"", into: &text, timeout: 5), text)
        XCTAssertFalse(text.contains("rung"), "events carry only the cursor")
    }
}
