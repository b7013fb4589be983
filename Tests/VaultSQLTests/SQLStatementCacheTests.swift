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
