import Foundation
import XCTest
@testable import VaultSQL

final class SQLMigratorTests: XCTestCase {
    let migrator = SQLMigrator([
        .init("first", sql: "CREATE TABLE a(x INTEGER); INSERT INTO a VALUES (1);"),
        .init("second", sql: "ALTER TABLE a ADD COLUMN y TEXT; INSERT INTO a VALUES (2, 'two');"),
    ])

    func testRunsInOrderOnceAndRecordsUserVersion() throws {
        let db = try SQLDatabase(path: ":memory:")
        XCTAssertEqual(try migrator.pending(db), ["first", "second"])
        try migrator.migrate(db)
        XCTAssertEqual(try db.userVersion, 2)
        XCTAssertTrue(try migrator.isCurrent(db))
        try migrator.migrate(db)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM a"), 2, "a migration ran twice")
    }

    func testResumesFromTheRecordedVersion() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(migrator.migrations.prefix(1))).migrate(db)
        XCTAssertEqual(try migrator.pending(db), ["second"])
        try migrator.migrate(db)
        XCTAssertEqual(try db.scalar(String.self, "SELECT y FROM a WHERE x = 2"), "two")
    }

    func testAFailingMigrationLeavesTheLastCompleteOne() throws {
        let db = try SQLDatabase(path: ":memory:")
        let broken = SQLMigrator(migrator.migrations + [.init("broken", sql: "CREATE TABLE b(z); INSERT INTO nowhere VALUES (1);")])
        XCTAssertThrowsError(try broken.migrate(db))
        XCTAssertEqual(try db.userVersion, 2)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'b'"), 0)
    }

    func testRefusesADatabaseNewerThanTheCode() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.setUserVersion(3)
        XCTAssertThrowsError(try migrator.migrate(db)) {
            XCTAssertEqual(($0 as? SQLError)?.kind, .newerSchema)
            XCTAssertTrue(($0 as? SQLError)?.message.contains("version 3") ?? false)
        }
        XCTAssertThrowsError(try migrator.isCurrent(db))
        XCTAssertEqual(try db.userVersion, 3)
    }
}
