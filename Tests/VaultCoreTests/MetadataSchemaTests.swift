import XCTest
import VaultSQL
@testable import VaultCore

/// The client's schema on the shared migrator: the same `user_version` record as before (one per
/// migration, seven of them), resumed from any version, and a newer database refused as before.
final class MetadataSchemaTests: XCTestCase {
    func testMigratesAFreshDatabaseToSevenOnceAndResumesAnOlderOne() throws {
        let db = try SQLDatabase(path: ":memory:")
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 7)
        XCTAssertTrue(try MetadataSchema.isCurrent(db))
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'quarantine'"), 1)

        let older = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(3))).migrate(older)
        XCTAssertEqual(try older.userVersion, 3)
        XCTAssertFalse(try MetadataSchema.isCurrent(older))
        try MetadataSchema.migrate(older)
        XCTAssertEqual(try older.userVersion, 7)
        XCTAssertEqual(try older.scalar(String.self, "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)"),
                       try db.scalar(String.self, "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)"))
    }

    func testANewerDatabaseIsRefusedWithTheUpgradeHint() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.setUserVersion(8)
        XCTAssertFalse(try MetadataSchema.isCurrent(db))
        XCTAssertThrowsError(try MetadataSchema.migrate(db)) {
            let e = $0 as? VaultError
            XCTAssertEqual(e?.kind, .integrity)
            XCTAssertEqual(e?.message, "the metadata database is from a newer vault (schema 8)")
            XCTAssertEqual(e?.hint, "upgrade vault")
        }
    }
}
