import XCTest
import VaultSQL
import VaultSyncPlan
import VaultPrimitives
@testable import VaultCore

/// The client's schema on the shared migrator: the same `user_version` record as before (one per
/// migration, eight of them), resumed from any version, and a newer database refused as before;
/// migration 8 (compact bases) keeps every base of a schema-7 database exactly.
final class MetadataSchemaTests: XCTestCase {
    /// Schema 7's `remote_base` (migration 4), for tests that turn a database back into one of
    /// version 7 or lower.
    static let schema7Bases = """
        DROP TABLE remote_base;
        CREATE TABLE remote_base(
          remote_id TEXT PRIMARY KEY,
          parent_id TEXT,
          name TEXT NOT NULL,
          type TEXT NOT NULL CHECK(type IN ('file','folder')),
          version INTEGER NOT NULL,
          record_seq INTEGER NOT NULL DEFAULT 0,
          content_seq INTEGER NOT NULL DEFAULT 0,
          content TEXT
        );
        CREATE INDEX remote_base_parent ON remote_base(parent_id);
        """

    func testMigratesAFreshDatabaseToEightOnceAndResumesAnOlderOne() throws {
        let db = try SQLDatabase(path: ":memory:")
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 8)
        XCTAssertTrue(try MetadataSchema.isCurrent(db))
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'quarantine'"), 1)

        let older = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(3))).migrate(older)
        XCTAssertEqual(try older.userVersion, 3)
        XCTAssertFalse(try MetadataSchema.isCurrent(older))
        try MetadataSchema.migrate(older)
        XCTAssertEqual(try older.userVersion, 8)
        let schema = "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name)"
        XCTAssertEqual(try older.scalar(String.self, schema), try db.scalar(String.self, schema))
    }

    func testANewerDatabaseIsRefusedWithTheUpgradeHint() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.setUserVersion(9)
        XCTAssertFalse(try MetadataSchema.isCurrent(db))
        XCTAssertThrowsError(try MetadataSchema.migrate(db)) {
            let e = $0 as? VaultError
            XCTAssertEqual(e?.kind, .integrity)
            XCTAssertEqual(e?.message, "the metadata database is from a newer vault (schema 9)")
            XCTAssertEqual(e?.hint, "upgrade vault")
        }
    }

    /// Bases as schema 7 wrote them (hex ids as TEXT, `root`, ids of other shapes, content
    /// records as JSON with and without a device name, odd strings) read back equal after
    /// migration 8, through the same table type the planner uses; the compact table is smaller.
    func testMigrationEightKeepsEveryBaseOfASchemaSevenDatabase() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(7))).migrate(db)
        var rng = SplitMix64(seed: 0xba5e)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        var bases: [RemoteBase] = []
        for i in 0..<300 {
            let folder = i % 10 == 0
            var content: ContentRecord?
            if !folder {
                var c = ContentRecord(blob: i == 7 ? "NOT-HEX \(i)" : hex(16), device: i % 3 == 0 ? UUID().uuidString.lowercased() : "dev-\(i)",
                                      deviceName: i % 2 == 0 ? nil : "Laptop \"\(i)\" / ✓", mime: "text/plain",
                                      mtime: i == 5 ? -86_400 : 1_700_000_000 + Int64(i), sealedSize: Int64(i) * 1_000 + 128,
                                      seq: Int64(i % 4), sha256: i == 9 ? hex(32).uppercased() : hex(32), size: Int64.max - Int64(i))
                c.v = i == 11 ? 2 : 1
                content = c
            }
            let id = i == 3 ? "server-id-\(i)" : hex(16)
            bases.append(RemoteBase(remoteId: id, parentId: i < 20 ? "root" : bases[i / 20].remoteId, name: "name \(i) ✓",
                                    isFolder: folder, version: Int64(i), recordSeq: Int64(i) * 2, contentSeq: Int64(i) * 3, content: content))
        }
        for b in bases {
            try db.run("INSERT INTO remote_base(remote_id, parent_id, name, type, version, record_seq, content_seq, content) VALUES (?,?,?,?,?,?,?,?)",
                       [b.remoteId, b.parentId, b.name, b.isFolder ? "folder" : "file", b.version, b.recordSeq, b.contentSeq,
                        try b.content.map(RemoteBaseTable.contentJSON)])
        }
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 8)
        let table = RemoteBaseTable(db: db)
        for b in bases {
            XCTAssertEqual(try table.base(remoteId: b.remoteId), b)
            XCTAssertEqual(try table.contentSeq(remoteId: b.remoteId), b.contentSeq)
        }
        XCTAssertEqual(Set(try table.children(of: "root").map(\.remoteId)), Set(bases.prefix(20).map(\.remoteId)))
        XCTAssertEqual(try table.children(of: bases[1].remoteId).count, 20)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE typeof(remote_id) = 'blob'"), 299)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'remote_base%'"), 2)
    }

    /// A damaged compact record is an error naming the column, never a plausible base.
    func testADamagedCompactRecordIsAnError() throws {
        let c = ContentRecord(blob: String(repeating: "ab", count: 16), device: "d", mime: "m", mtime: 1, sealedSize: 2, seq: 3,
                              sha256: String(repeating: "cd", count: 32), size: 4)
        let bytes = CompactColumns.record(c)
        XCTAssertEqual(try CompactColumns.content(bytes, column: "content"), c)
        XCTAssertLessThan(bytes.count, 64)
        for bad in [Array(bytes.dropLast()), bytes + [0], [2] + bytes.dropFirst(), [UInt8]()] {
            XCTAssertThrowsError(try CompactColumns.content(bad, column: "content")) {
                XCTAssertEqual(($0 as? SQLError)?.kind, .decoding)
            }
        }
    }
}
