import Foundation
import VaultTestSupport
import XCTest

/// The upgrade of vaults made by the schema-7 and schema-8 releases (Tests/Fixtures/schema7,
/// schema8) to schema 15 (issue 21's compact bases, compact nodes, bases from their nodes, compact outbox, compact blobs, folders index, outbox entries and blobs from their nodes), through the `vault`
/// binary: in place on first open, keeping every node, base, counter and blob; a `kill -9` at any
/// point of a migration leaves the schema before it (the next open migrates) and never a mix;
/// old backup bundles still import.
final class SchemaMigrationTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static let fixture = fixtures.appendingPathComponent("schema7")
    static let fixture8 = fixtures.appendingPathComponent("schema8")
    var h: CLIHarness!

    override func setUpWithError() throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/sqlcipher") else {
            throw XCTSkip("needs the sqlcipher command-line tool (scripts/install-deps.sh)")
        }
        h = try CLIHarness(keyring: false)
        try Data(contentsOf: Self.fixture.appendingPathComponent("password")).write(to: h.passwordFile)
        try copyFixtureVault(to: h.home)
    }

    override func tearDown() { h = nil }

    /// The fixture's vault folder at `home`, with the modes a vault has (git keeps only 0644).
    func copyFixtureVault(to home: URL, from fixture: URL = fixture) throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: home.path) { try fm.removeItem(at: home) }
        try fm.copyItem(at: fixture.appendingPathComponent("vault"), to: home)
        try fm.createDirectory(at: home.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        for case let rel as String in fm.enumerator(atPath: home.path)! {
            var isDir: ObjCBool = false
            let path = home.appendingPathComponent(rel).path
            _ = fm.fileExists(atPath: path, isDirectory: &isDir)
            try fm.setAttributes([.posixPermissions: isDir.boolValue ? 0o700 : 0o600], ofItemAtPath: path)
        }
        try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
    }

    /// `statement`'s rows through the sqlcipher tool and the documented key, `|`-separated.
    func sql(_ statement: String, home: URL? = nil) throws -> String {
        let home = home ?? h.home
        let key = try DocumentedKeys.databaseKeyHex(vaultHome: home.path, password: "fixture password")
        let (st, out) = try runCapture("/usr/bin/sqlcipher", ["-batch", home.appendingPathComponent("metadata.db").path],
                                       stdin: "PRAGMA key = \"x'\(key)'\";\n\(statement);\n")
        XCTAssertEqual(st, 0, out)
        return out.split(separator: "\n").filter { $0 != "ok" }.joined(separator: "\n")
    }

    /// Schema 7 exactly as the fixture has it: its version, its bases table, no half-made copy.
    func assertSchemaSeven(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "7", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*), count(content) FROM remote_base WHERE type IN ('file','folder') AND typeof(remote_id) = 'text'"),
                       "7|4", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'remote_base_compact'"), "0", label, file: file, line: line)
    }

    /// Schema 8 exactly: its version, its nodes table (TEXT ids and states), no half-made copy.
    func assertSchemaEight(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "8", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*), sum(typeof(id) = 'text' AND typeof(content_state) = 'text') FROM nodes"), "9|9",
                       label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'nodes_schema8'"), "0", label, file: file, line: line)
    }

    /// Everything the fixture holds, read through `vault` (which upgrades it), then schema 8.
    func assertUpgraded(_ label: String, home: URL? = nil, greeting: String = "hello schema seven\n",
                        file: StaticString = #filePath, line: UInt = #line) throws {
        let env = home.map { ["VAULT_HOME": $0.path] } ?? [:]
        let tree = try h.ok(["tree"] + h.pw, env: env).out
        for name in ["docs/", "deep/", "r.bin", "Grüße ✓.txt", "a.txt", "empty", "local-only.txt", "empty-folder/"] {
            XCTAssertTrue(tree.contains(name), "\(label): \(name) in\n\(tree)", file: file, line: line)
        }
        XCTAssertEqual(try h.ok(["cat", "/docs/a.txt"] + h.pw, env: env).out, greeting, label, file: file, line: line)
        XCTAssertEqual(try h.ok(["cat", "/docs/Grüße ✓.txt"] + h.pw, env: env).out, "unicode\n", label, file: file, line: line)
        let doctor = try h.ok(["doctor"] + h.pw, env: env).out
        XCTAssertTrue(doctor.contains("Everything is consistent."), "\(label): \(doctor)", file: file, line: line)
        let status = try h.ok(["status"] + h.pw, env: env).out
        XCTAssertTrue(status.contains("nodes   9"), "\(label): \(status)", file: file, line: line)
        XCTAssertTrue(status.contains("pending 1 local change(s)"), "\(label): \(status)", file: file, line: line)
        XCTAssertTrue(status.contains("pinned 147 B, cached 68.8 KiB, staged 139 B"), "\(label): \(status)", file: file, line: line)
        XCTAssertEqual(try sql("PRAGMA user_version", home: home), "15", label, file: file, line: line)
        // Blobs from their nodes: the blobs of files whose node holds their SHA-256 take it from there.
        XCTAssertEqual(try sql("""
            SELECT count(*) > 0 FROM blobs b JOIN nodes n ON n.id = b.node_id WHERE b.sha256 IS NULL AND length(n.sha256) = 32
            """, home: home), "1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM blobs b JOIN nodes n ON n.id = b.node_id WHERE b.sha256 = n.sha256", home: home), "0",
                       label, file: file, line: line)
        // Outbox entries from their nodes: the pending upload takes what its node holds alike
        // (name, parent, blob, size, SHA-256, mime: mask 63), its request id 16 bytes.
        XCTAssertEqual(try sql("SELECT from_node, typeof(request_id), length(request_id), coalesce(name, parent_id, blob_id, size, sha256, mime) IS NULL FROM outbox",
                               home: home), "63|blob|16|1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name IN ('outbox_schema13', 'nodes_keep_outbox_update', 'nodes_keep_outbox_delete')",
                               home: home), "2", label, file: file, line: line)
        // The compact blobs: ids as keys, areas as integers, in the rows that name them too.
        XCTAssertEqual(try sql("""
            SELECT count(*) > 0 AND count(*) = sum(typeof(id) = 'blob' AND typeof(area) = 'integer' AND length(coalesce(sha256, (SELECT n.sha256 FROM nodes n WHERE n.id = blobs.node_id))) = 32) FROM blobs
            """, home: home), "1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(local_path) > 0 AND count(local_path) = sum(typeof(local_path) = 'blob') FROM nodes", home: home),
                       "1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'blobs_schema11'", home: home), "0", label, file: file, line: line)
        // The compact outbox: the pending entry's op and state as integers, its payload a compact record.
        XCTAssertEqual(try sql("SELECT count(*), sum(typeof(op) = 'integer' AND typeof(state) = 'integer'), sum(hex(substr(payload, 1, 1)) = '03') FROM outbox",
                               home: home), "1|1|1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name IN ('outbox_schema10', 'sqlite_autoindex_outbox_1')", home: home),
                       "0", label, file: file, line: line)
        // The fixtures' bases are of nodes made there (another id): each keeps its own fields.
        XCTAssertEqual(try sql("SELECT count(*), count(content), sum(typeof(remote_id) = 'blob'), sum(from_node = 0 AND name IS NOT NULL) FROM remote_base",
                               home: home), "7|4|7|7", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name IN ('remote_base_v10', 'nodes_keep_base_update', 'nodes_keep_base_delete')",
                               home: home), "2", label, file: file, line: line)
        // The compact nodes: server ids of the 7 pushed nodes as 16-byte keys, states as integers,
        // the 5 files' SHA-256s as 32 bytes, and no copy of the old table left.
        XCTAssertEqual(try sql("""
            SELECT count(*), sum(length(remote_id) = 16), sum(typeof(content_state) = 'integer'), sum(length(sha256) = 32) FROM nodes
            """, home: home), "9|7|9|5", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name IN ('nodes_schema8', 'nodes_parent_name', 'nodes_lru')", home: home),
                       "0", label, file: file, line: line)
    }

    func testASchemaSevenVaultUpgradesInPlaceOnFirstOpen() throws {
        try assertSchemaSeven("the fixture")
        try assertUpgraded("after the first open")
        // The bases the sync planner reads are the fixture's, field by field.
        XCTAssertEqual(try sql("SELECT name, folder, version, record_seq, content_seq, length(content) < 120 FROM remote_base WHERE name = 'a.txt'"),
                       "a.txt|0|1|1|1|1")
    }

    /// `kill -9` at each crash point of migration 8 (after the first and the fourth row copied,
    /// after the copy, after the swap, all before its commit) leaves schema 7; the next open upgrades.
    func testAKillAtAnyPointOfTheMigrationLeavesSchemaSeven() throws {
        for point in ["migration-8-row#1", "migration-8-row#4", "migration-8-copied", "migration-8-swapped"] {
            try copyFixtureVault(to: h.home)
            let killed = try h.run(["tree"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": point])
            XCTAssertEqual(killed.status, 9, "\(point): expected SIGKILL, got \(killed.status): \(killed.stderr)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: h.home.appendingPathComponent("metadata.db-journal").path),
                          "\(point): killed inside the migration's transaction")
            try assertSchemaSeven(point)   // sqlcipher rolls the hot journal back, as vault does
            try assertUpgraded("the open after a kill at \(point)")
        }
    }

    /// `kill -9` inside migration 9 (after the first node copied, after the copy, after the old
    /// table is dropped) leaves schema 8: of a schema-8 vault, and of a schema-7 one whose
    /// migration 8 committed before; the next open upgrades.
    func testAKillAtAnyPointOfMigrationNineLeavesSchemaEight() throws {
        for (fixture, point) in [(Self.fixture8, "migration-9-row#1"), (Self.fixture8, "migration-9-copied"),
                                 (Self.fixture8, "migration-9-swapped"), (Self.fixture, "migration-9-row#3")] {
            try copyFixtureVault(to: h.home, from: fixture)
            let label = "\(fixture.lastPathComponent) killed at \(point)"
            let killed = try h.run(["tree"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": point])
            XCTAssertEqual(killed.status, 9, "\(label): expected SIGKILL, got \(killed.status): \(killed.stderr)")
            try assertSchemaEight(label)
            try assertUpgraded("the open after \(label)", greeting: fixture == Self.fixture8 ? "hello schema eight\n" : "hello schema seven\n")
        }
    }

    /// Schema 9 exactly: its version, its bases table (no `from_node`), no half-made copy.
    func assertSchemaNine(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "9", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT group_concat(name) FROM sqlite_master WHERE instr(sql, 'from_node') > 0 OR name = 'remote_base_v10'"), "",
                       label, file: file, line: line)
    }

    /// `kill -9` inside migration 10 (after the first base copied, after the copy, after the swap)
    /// leaves schema 9 (migration 9 of the schema-8 fixture committed before it); the next open upgrades.
    func testAKillAtAnyPointOfMigrationTenLeavesSchemaNine() throws {
        try assertKillsInside(migration: 10, leave: assertSchemaNine)
    }

    /// `kill -9` of a first open of the schema-8 fixture after the first row of `migration`
    /// copied, after the copy, and after the old table is dropped: each leaves the schema before
    /// it (`leave` checks that), and the next open upgrades.
    func assertKillsInside(migration: Int, leave: (String, StaticString, UInt) throws -> Void,
                           file: StaticString = #filePath, line: UInt = #line) throws {
        for point in ["row#1", "copied", "swapped"].map({ "migration-\(migration)-\($0)" }) {
            try copyFixtureVault(to: h.home, from: Self.fixture8)
            let label = "schema8 killed at \(point)"
            let killed = try h.run(["tree"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": point])
            XCTAssertEqual(killed.status, 9, "\(label): expected SIGKILL, got \(killed.status): \(killed.stderr)", file: file, line: line)
            try leave(label, file, line)
            try assertUpgraded("the open after \(label)", greeting: "hello schema eight\n", file: file, line: line)
        }
    }

    /// Schema 10 exactly: its version, its outbox (states as text), no half-made copy.
    func assertSchemaTen(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "10", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*), sum(typeof(state) = 'text' AND substr(payload, 1, 1) = '{') FROM outbox"), "1|1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'outbox_schema10'"), "0", label, file: file, line: line)
    }

    /// `kill -9` inside migration 11 (after the first entry copied, after the copy, after the old
    /// table is dropped) leaves schema 10 (migrations 9 and 10 committed before it); the next open upgrades.
    func testAKillAtAnyPointOfMigrationElevenLeavesSchemaTen() throws {
        try assertKillsInside(migration: 11, leave: assertSchemaTen)
    }

    /// Schema 11 exactly: its version, its blobs (ids and areas as text), no half-made copy.
    func assertSchemaEleven(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "11", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) > 0 AND count(*) = sum(typeof(id) = 'text' AND typeof(area) = 'text') FROM blobs"), "1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'blobs_schema11'"), "0", label, file: file, line: line)
    }

    /// `kill -9` inside migration 12 (after the first blob copied, after the copy, after the old
    /// table is dropped) leaves schema 11; the next open upgrades.
    func testAKillAtAnyPointOfMigrationTwelveLeavesSchemaEleven() throws {
        try assertKillsInside(migration: 12, leave: assertSchemaEleven)
    }

    /// Schema 13 exactly: its version, its outbox (request ids as text, no mask), no half-made copy.
    func assertSchemaThirteen(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "13", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*), sum(typeof(request_id) = 'text') FROM outbox"), "1|1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'outbox' AND sql LIKE '%from_node%'"), "0", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name IN ('outbox_schema13', 'nodes_keep_outbox_update')"), "0",
                       label, file: file, line: line)
    }

    /// `kill -9` inside migration 14 (after the first entry copied, after the copy, after the old
    /// table is dropped) leaves schema 13; the next open upgrades.
    func testAKillAtAnyPointOfMigrationFourteenLeavesSchemaThirteen() throws {
        try assertKillsInside(migration: 14, leave: assertSchemaThirteen)
    }

    /// Schema 14 exactly: its version, every blob holding its own SHA-256, no half-made copy.
    func assertSchemaFourteen(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try sql("PRAGMA user_version"), "14", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) > 0 AND count(*) = count(sha256) FROM blobs"), "1", label, file: file, line: line)
        XCTAssertEqual(try sql("SELECT count(*) FROM sqlite_master WHERE name IN ('blobs_schema14', 'nodes_keep_blob_sha_update')"), "0",
                       label, file: file, line: line)
    }

    /// `kill -9` inside migration 15 (after the rows are copied, after the copy, after the old
    /// table is dropped) leaves schema 14; the next open upgrades.
    func testAKillAtAnyPointOfMigrationFifteenLeavesSchemaFourteen() throws {
        try assertKillsInside(migration: 15, leave: assertSchemaFourteen)
    }

    /// A vault made by the schema-8 release upgrades in place on first open, and its backup
    /// bundle imports.
    func testASchemaEightVaultAndBackupBundleUpgrade() throws {
        try copyFixtureVault(to: h.home, from: Self.fixture8)
        try assertSchemaEight("the fixture")
        try assertUpgraded("after the first open", greeting: "hello schema eight\n")
        let target = h.root.appendingPathComponent("restored8")
        try h.ok(["backup", "import", Self.fixture8.appendingPathComponent("v8.bundle").path,
                  "--passphrase-file", Self.fixture8.appendingPathComponent("passphrase").path], env: ["VAULT_HOME": target.path])
        try assertUpgraded("the imported bundle", home: target, greeting: "hello schema eight\n")
    }

    /// A backup bundle written by the schema-7 release imports, and the vault it makes upgrades.
    func testASchemaSevenBackupBundleImports() throws {
        let target = h.root.appendingPathComponent("restored")
        try h.ok(["backup", "import", Self.fixture.appendingPathComponent("v7.bundle").path,
                  "--passphrase-file", Self.fixture.appendingPathComponent("passphrase").path], env: ["VAULT_HOME": target.path])
        try assertUpgraded("the imported bundle", home: target)
    }
}
