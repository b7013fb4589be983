import XCTest
@testable import VaultSQL

final class SQLStatementCacheTests: XCTestCase {
    func testReusesStatementsWithBindingsCleared() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.execute("CREATE TABLE t(k INTEGER, v TEXT)")
        let opened = db.cachedStatementCount   // what opening ran (the cipher check)
        for k in 0..<5 { try db.run("INSERT INTO t VALUES (?, ?)", [k, "v\(k)"]) }
        XCTAssertEqual(db.cachedStatementCount, opened + 1, "five inserts share one statement")
        XCTAssertEqual(try db.query("SELECT v FROM t WHERE k >= ?", [3]).count, 2)
        XCTAssertEqual(try db.query("SELECT v FROM t WHERE k >= ?", [1]).count, 4)
        XCTAssertEqual(db.cachedStatementCount, opened + 2)
        // Bindings are cleared between uses: an unbound parameter is NULL, not the last value.
        XCTAssertEqual(try db.query("SELECT v FROM t WHERE k >= ?").count, 0)
        // A queryOne that stopped after one row was reset: the next use starts from the top.
        XCTAssertEqual(try db.queryOne("SELECT k FROM t ORDER BY k")?.decode(Int.self, "k"), 0)
        XCTAssertEqual(try db.queryOne("SELECT k FROM t ORDER BY k")?.decode(Int.self, "k"), 0)
        XCTAssertEqual(db.cachedStatementCount, opened + 3)
    }

    /// The cache holds statements and no statement holds its database: a connection that
    /// nobody refers to any longer is freed and its file closed, cached statements and all (a
    /// cycle kept every connection a long-running process ever opened: `vault mount` leaked one,
    /// its page cache and its file, per burst of requests).
    func testADatabaseNobodyRefersToIsFreedAndItsFileClosed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sqlfree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.db").path
        func openFiles() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
                .filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
        }
        weak var freed: SQLDatabase?
        var statement: SQLStatement?
        do {
            let db = try SQLDatabase(path: path)
            freed = db
            try db.execute("CREATE TABLE t(k INTEGER)")
            try db.run("INSERT INTO t VALUES (?)", [1])
            XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t"), 1)
            XCTAssertGreaterThan(db.cachedStatementCount, 0)
            statement = try db.prepare("SELECT k FROM t")
            XCTAssertEqual(try openFiles(), 1)
        }
        XCTAssertNil(freed, "the database outlived every reference to it")
        // A statement kept beyond its database still works: SQLite keeps the connection for it.
        XCTAssertEqual(try statement?.step(), true)
        statement = nil
        XCTAssertEqual(try openFiles(), 0, "the database file is still open")
    }

    func testNestedUseOfTheSameTextGetsItsOwnStatement() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.execute("CREATE TABLE t(k INTEGER)")
        try db.run("INSERT INTO t VALUES (1), (2)")
        let sql = "SELECT count(*) AS n FROM t WHERE k >= ?"
        let inner = try db.withCachedStatement(sql) { _ in try db.scalar(Int.self, sql, [2]) }
        XCTAssertEqual(inner, 1)
        XCTAssertEqual(try db.scalar(Int.self, sql, [1]), 2)
    }

    func testCacheSurvivesSchemaChangesAndCloseFinalizes() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.execute("CREATE TABLE t(k INTEGER)")
        try db.run("INSERT INTO t VALUES (1)")
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t"), 1)
        try db.execute("ALTER TABLE t ADD COLUMN v TEXT")
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM t"), 1)
        db.close()
        XCTAssertEqual(db.cachedStatementCount, 0)
    }
}
