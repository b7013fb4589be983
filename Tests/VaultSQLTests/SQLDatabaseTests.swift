import Foundation
import XCTest
@testable import VaultSQL

final class SQLDatabaseTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vaultsql-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    let key = String(repeating: "ab", count: 32)
    let otherKey = String(repeating: "cd", count: 32)

    func testKeyedRoundTripAndWrongKey() throws {
        let path = dir.appendingPathComponent("m.db").path
        do {
            let db = try SQLDatabase(path: path, rawKeyHex: key)
            try db.execute("CREATE TABLE t(a INTEGER, b TEXT, c BLOB)")
            try db.run("INSERT INTO t VALUES (?, ?, ?)", [42, "marker-text", [UInt8]([1, 2, 3])])
        }
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertNil(raw.range(of: Data("marker-text".utf8)), "plaintext reached the file")
        XCTAssertNil(raw.range(of: Data("SQLite format 3".utf8)))

        let db = try SQLDatabase(path: path, rawKeyHex: key)
        let row = try XCTUnwrap(db.queryOne("SELECT a, b, c FROM t"))
        XCTAssertEqual(row["a"].int, 42)
        XCTAssertEqual(row["b"].string, "marker-text")
        XCTAssertEqual(row["c"].bytes, [1, 2, 3])

        XCTAssertThrowsError(try SQLDatabase(path: path, rawKeyHex: otherKey)) { error in
            XCTAssertEqual((error as? SQLError)?.kind, .notADatabase)
        }
        XCTAssertThrowsError(try SQLDatabase(path: path)) { error in
            XCTAssertEqual((error as? SQLError)?.kind, .notADatabase)
        }
    }

    func testTransactionRollsBack() throws {
        let db = try SQLDatabase(path: dir.appendingPathComponent("t.db").path)
        try db.execute("CREATE TABLE t(a INTEGER UNIQUE)")
        try db.run("INSERT INTO t VALUES (1)")
        XCTAssertThrowsError(try db.transaction {
            try db.run("INSERT INTO t VALUES (2)")
            try db.run("INSERT INTO t VALUES (1)")
        }) { XCTAssertEqual(($0 as? SQLError)?.kind, .constraint) }
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t")?.int, 1)
    }

    func testRekey() throws {
        let path = dir.appendingPathComponent("r.db").path
        do {
            let db = try SQLDatabase(path: path, rawKeyHex: key)
            try db.execute("CREATE TABLE t(a)")
            try db.run("INSERT INTO t VALUES ('x')")
            try [UInt8](repeating: 0xcd, count: 32).withUnsafeBytes { try db.rekey(rawKey: $0) }
        }
        XCTAssertThrowsError(try SQLDatabase(path: path, rawKeyHex: key))
        let db = try SQLDatabase(path: path, rawKeyHex: otherKey)
        XCTAssertEqual(try db.scalar("SELECT a FROM t")?.string, "x")
    }
}
