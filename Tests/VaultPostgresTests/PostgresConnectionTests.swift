import Foundation
@testable import VaultPostgres
import VaultSQL
import VaultTestSupport
import XCTest

/// VaultPostgres against a real PostgreSQL 15 (the process's `PostgresCluster`, one fresh database
/// per test): typed rows, placeholders, transactions and their retry, errors, LISTEN/NOTIFY.
final class PostgresConnectionTests: XCTestCase {
    private var url = ""

    override func setUpWithError() throws {
        try XCTSkipUnless(PostgresCluster.available, PostgresCluster.unavailableMessage)
        url = try PostgresCluster.shared().makeDatabase()
    }

    func testRowsDecodeByNameAsSQLiteStorageClasses() throws {
        let db = try PostgresConnection(url: url)
        try db.execute("CREATE TABLE t(id TEXT PRIMARY KEY, n BIGINT, x DOUBLE PRECISION, b BYTEA, flag BOOLEAN, note TEXT)")
        // A Swift Bool binds as an integer (as on SQLite); a boolean column reads back as one.
        XCTAssertEqual(try db.run("INSERT INTO t VALUES(?, ?, ?, ?, TRUE, ?)", ["a", 42, 1.25, [UInt8]([0, 255, 7]), String?.none]), 1)
        let row = try XCTUnwrap(db.queryOne("SELECT * FROM t WHERE id = ?", ["a"]))
        XCTAssertEqual(try row.decode(Int64.self, "n"), 42)
        XCTAssertEqual(try row.decode(Double.self, "x"), 1.25)
        XCTAssertEqual(try row.decode([UInt8].self, "b"), [0, 255, 7])
        XCTAssertEqual(try row.decode(Bool.self, "flag"), true)
        XCTAssertNil(try row.decode(String?.self, "note"))
        XCTAssertThrowsError(try row.decode(String.self, "n")) { XCTAssertEqual(($0 as? SQLError)?.kind, .decoding) }
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t WHERE note IS NULL AND id != '?'"), 1)
        XCTAssertEqual(try db.scalar(Double.self, "SELECT \(db.dialect.total("n")) FROM t WHERE id = ?", ["none"]), 0)
    }

    func testPlaceholdersSkipQuotesAndComments() {
        XCTAssertEqual(Placeholders.numbered("SELECT '?', \"a?\", ? -- ?\n, ?").sql, "SELECT '?', \"a?\", $1 -- ?\n, $2")
        XCTAssertEqual(Placeholders.numbered("VALUES(?,?,?)").count, 3)
    }

    func testUniqueViolationIsAConstraintErrorLikeSQLite() throws {
        let db = try PostgresConnection(url: url)
        try db.execute("CREATE TABLE t(id TEXT PRIMARY KEY)")
        try db.run("INSERT INTO t VALUES(?)", ["x"])
        XCTAssertThrowsError(try db.run("INSERT INTO t VALUES(?)", ["x"])) { error in
            let e = error as? SQLError
            XCTAssertEqual(e?.kind, .constraint)
            XCTAssertEqual(e?.sqlState, "23505")
        }
        try db.run(db.dialect.insertIgnoringDuplicates(into: "t", ["id"]), ["x"])   // no error
    }

    func testTransactionRollsBackOnThrow() throws {
        let db = try PostgresConnection(url: url)
        try db.execute("CREATE TABLE t(id BIGINT)")
        struct Boom: Error {}
        XCTAssertThrowsError(try db.transaction { try db.run("INSERT INTO t VALUES(?)", [1]); throw Boom() })
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t"), 0)
        try db.transaction { try db.run("INSERT INTO t VALUES(?)", [2]) }
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t"), 1)
    }

    /// Two serializable transactions that each read what the other writes: PostgreSQL aborts one
    /// with 40001, and the retrying transaction runs it again to success.
    func testSerializationFailureIsRetried() throws {
        let setup = try PostgresConnection(url: url)
        try setup.execute("CREATE TABLE c(k TEXT PRIMARY KEY, v BIGINT); INSERT INTO c VALUES('a', 0), ('b', 0)")
        let a = try PostgresConnection(url: url), b = try PostgresConnection(url: url)
        var attempts = 0
        try a.transaction(isolation: .serializable) {
            attempts += 1
            _ = try a.scalar(Int.self, "SELECT sum(v)::bigint FROM c")
            if attempts == 1 {
                // b commits a conflicting write while a is open: a's commit must fail.
                try b.transaction(isolation: .serializable) {
                    _ = try b.scalar(Int.self, "SELECT sum(v)::bigint FROM c")
                    try b.run("UPDATE c SET v = v + 1 WHERE k = ?", ["b"])
                }
            }
            try a.run("UPDATE c SET v = v + 1 WHERE k = ?", ["a"])
        }
        XCTAssertEqual(attempts, 2)
        XCTAssertEqual(try setup.scalar(Int.self, "SELECT sum(v)::bigint FROM c"), 2)
    }

    /// A host that drops packets (neither refuses nor answers) fails the connect after its
    /// `connect_timeout` with a typed error, instead of hanging for the kernel's SYN retries.
    /// The URL's own bound overrides the default one (`defaultBounds`, 5 s).
    func testAHostThatDropsPacketsIsUnreachableAfterTheConnectTimeout() throws {
        let silent = try SilentPort()
        XCTAssertThrowsError(try PostgresConnection(url: "postgresql://vault:x@127.0.0.1:\(silent.port)/postgres?connect_timeout=2")) {
            XCTAssertEqual(($0 as? PostgresError)?.kind, .unreachable, "\($0)")
            XCTAssertTrue("\($0)".contains("did not answer in time"), "\($0)")
        }
        XCTAssertTrue(PostgresConnection.defaultBounds.contains { $0 == ("connect_timeout", "5") })
        XCTAssertTrue(PostgresConnection.defaultBounds.contains { $0.key == "tcp_user_timeout" })
    }

    /// The pool makes connections as they are needed, up to its capacity, and reuses them; a
    /// connection PostgreSQL closed (here: terminated by the test, as a restart does) is made
    /// again at checkout, so the next transaction on it just works.
    func testThePoolReusesAndRevivesItsConnections() throws {
        let pool = try PostgresPool(url: url, capacity: 2)
        XCTAssertEqual(pool.counts.open, 1, "the first connection is made at once (a bad URL fails there)")
        let backend = "SELECT pg_backend_pid()"
        let (outer, inner) = try pool.withConnection { c in
            (try c.scalar(Int.self, backend), try pool.withConnection { d in try d.scalar(Int.self, backend) })
        }
        XCTAssertNotEqual(outer, inner, "two checkouts at once hold two connections")
        XCTAssertEqual(pool.counts.open, 2)
        XCTAssertEqual(pool.counts.idle, 2)
        XCTAssertTrue([outer, inner].contains(try pool.withConnection { c in try c.scalar(Int.self, backend) }), "an idle connection is reused")
        let admin = try PostgresConnection(url: url)
        let others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        _ = try admin.query("SELECT pg_terminate_backend(pid) \(others)")
        try waitUntil("the pool's connections to be terminated") { try admin.scalar(Int.self, "SELECT count(*) \(others)") == 0 }
        for _ in 0..<3 {
            let pid = try pool.withConnection { c in try c.transaction { try c.scalar(Int.self, backend) } }
            XCTAssertNotEqual(pid, outer); XCTAssertNotEqual(pid, inner)
        }
        XCTAssertEqual(pool.counts.open, 2, "revived in place, not added")
    }

    func testConnectionRefusedAndAuthenticationFailedAreTyped() throws {
        let port = try freeLoopbackPort()
        XCTAssertThrowsError(try PostgresConnection(url: "postgresql://vault:x@127.0.0.1:\(port)/postgres?connect_timeout=5")) {
            XCTAssertEqual(($0 as? PostgresError)?.kind, .connectionRefused, "\($0)")
        }
        let wrong = try PostgresCluster.shared().url(password: "wrong")
        XCTAssertThrowsError(try PostgresConnection(url: wrong)) { error in
            XCTAssertEqual((error as? PostgresError)?.kind, .authenticationFailed, "\(error)")
            XCTAssertFalse("\(error)".contains("wrong"), "the password must not appear in messages")
        }
        XCTAssertThrowsError(try PostgresConnection(url: "mysql://x")) { XCTAssertEqual(($0 as? PostgresError)?.kind, .invalidURL) }
        XCTAssertEqual(PostgresConnection.redact("postgresql://u:secret@h:1/d"), "postgresql://u:***@h:1/d")
    }

    func testListenNotify() throws {
        let listener = try PostgresConnection(url: url), sender = try PostgresConnection(url: url)
        try listener.listen("vault changes")
        XCTAssertEqual(try listener.notifications(timeoutMillis: 0), [])
        try sender.transaction { try sender.notify("vault changes", payload: "alice:7") }
        var got: [PostgresConnection.Notification] = []
        try waitUntil("a notification", timeout: 10) {
            got += try listener.notifications(timeoutMillis: 200)
            return !got.isEmpty
        }
        XCTAssertEqual(got, [PostgresConnection.Notification(channel: "vault changes", payload: "alice:7")])
    }

    /// A restarted server costs the statement that meets the broken connection (typed
    /// `.connectionLost`); the next one reconnects by itself.
    func testAConnectionReconnectsAfterTheServerRestarts() throws {
        let db = try PostgresConnection(url: url)
        try db.execute("CREATE TABLE t(id BIGINT)")
        try PostgresCluster.shared().restart()
        do {
            _ = try db.scalar(Int.self, "SELECT count(*) FROM t")
        } catch let e as PostgresError {
            XCTAssertEqual(e.kind, .connectionLost, "\(e)")
        }
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t"), 0)
    }
}
