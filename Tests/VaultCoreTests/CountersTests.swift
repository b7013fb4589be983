import Foundation
import XCTest
import VaultSQL
@testable import VaultCore
@testable import VaultKeys

/// The maintained totals (issue 21 "Counters instead of scans"): the triggers keep every counter
/// equal to a recount through each kind of writer, migration 7 fills them for a vault made
/// without them, `vault doctor` names and corrects a wrong one, and folders are read in pages
/// through the `(parent_id, name)` index.
final class CountersTests: VaultTestCase {
    /// The stored counters equal a recount of the tables.
    func assertCountersAgree(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let stored = try vault.countersTable.values(), counted = try vault.countersTable.recount()
        XCTAssertEqual(stored.count, CountersTable.Name.allCases.count, what, file: file, line: line)
        XCTAssertEqual(stored, counted, what, file: file, line: line)
    }

    func testEveryWriterKeepsTheCountersEqualToARecount() throws {
        try assertCountersAgree("a new vault")
        XCTAssertEqual(try vault.nodeCount(), 1, "the root")
        try vault.mkdir("/c")
        let a = try cachedFile("/c/a", size: 10_000)
        _ = try cachedFile("/c/b", size: 20_000)
        _ = try vault.put(localFile: try file("staged", size: 30_000), to: "/staged")
        try assertCountersAgree("put and upload")
        XCTAssertEqual(try vault.nodeCount(), 5)
        XCTAssertGreaterThan(try vault.outboxCounts().pending, 0, "the staged put awaits sync")
        try vault.setPinned("/c", true)
        try assertCountersAgree("pin a folder")
        let pinned = try vault.storageReport()
        XCTAssertGreaterThan(pinned.pinnedBytes, 30_000)
        XCTAssertGreaterThan(pinned.stagedBytes, 30_000)
        XCTAssertEqual(pinned.cachedBytes, 0)
        try vault.setPinned("/c/b", false)
        try assertCountersAgree("unpin a file")
        XCTAssertGreaterThan(try vault.storageReport().cachedBytes, 20_000)
        _ = try vault.evict(paths: ["/c/b"])
        try assertCountersAgree("evict")
        XCTAssertEqual(try vault.storageReport().cachedBytes, 0)
        _ = try vault.put(localFile: try file("a2", size: 5_000, seed: 9), to: "/c/a", replace: true)
        try assertCountersAgree("replace a file's content")
        try vault.move("/c/a", to: "/moved")
        try assertCountersAgree("move")
        let seq = try XCTUnwrap(try vault.outboxTable.entries().first?.seq)
        try vault.outboxTable.markFailed(seq: seq, .conflict, reason: "test")
        try assertCountersAgree("an entry in conflict")
        XCTAssertEqual(try vault.outboxCounts().conflict, 1)
        XCTAssertEqual(try vault.outboxProblems().count, 1)
        _ = try vault.outboxTable.hold(nodeId: try vault.resolve("/staged").id, as: .paused)
        try assertCountersAgree("held entries")
        try vault.recordConflicts([SyncMessage(kind: .editEdit, path: "/moved", text: "both edited")])
        try assertCountersAgree("a conflict kept")
        XCTAssertEqual(try vault.conflictCount(), 1)
        try vault.clearConflicts()
        try assertCountersAgree("conflicts cleared")
        try vault.remove("/c", recursive: true)
        try vault.remove("/moved")
        try vault.remove("/staged")
        try assertCountersAgree("remove")
        XCTAssertEqual(try vault.nodeCount(), 1)
        XCTAssertEqual(try vault.doctor().repaired.filter { $0.hasPrefix("counter ") }, [])
        _ = a
    }

    /// A database of schema 6 (no counters), its rows written as that schema did: migration 7
    /// fills the counters from them, and they stay right through migrations 8 and 9.
    func testMigrationSevenFillsTheCountersOfAVaultMadeWithoutThem() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(6))).migrate(db)
        let pulled = String(repeating: "ab", count: 16), local = UUID().uuidString.lowercased()
        for (id, parent, type, pinned) in [("root", nil, "folder", 0), (pulled, "root", "file", 1), (local, "root", "file", 0)] {
            try db.run("INSERT INTO nodes(id, remote_id, parent_id, name, type, modified_at, pinned) VALUES (?,?,?,?,?,0,?)",
                       [id, id == pulled ? pulled : nil, parent, id, type, pinned])
        }
        for (id, node, area, sealed) in [("b1", pulled, "cache", 10_000), ("b2", local, "cache", 20_000), ("b3", local, "staging", 30_000)] {
            try db.run("INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at) VALUES (?,?,?,1,?,'x',1,0)",
                       [id, node, area, sealed])
        }
        try db.run("INSERT INTO outbox(op, node_id, payload, request_id, created_at) VALUES ('upload', ?, '{}', 'r1', 0)", [local])
        try db.run("INSERT INTO sync_messages(created_at, kind, path, text) VALUES (0, 'edit-edit', '/a', 'both edited')")
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, MetadataSchema.migrator.latestVersion)
        let counters = CountersTable(db: db)
        XCTAssertEqual(try counters.values(), try counters.recount())
        XCTAssertEqual(try counters.value(.nodes), 3)
        XCTAssertEqual(try counters.value(.pinnedBytes), 10_000)
        XCTAssertEqual(try counters.value(.cachedBytes), 20_000)
        XCTAssertEqual(try counters.value(.stagedBytes), 30_000)
        XCTAssertEqual(try counters.value(.outboxPending), 1)
        XCTAssertEqual(try counters.value(.conflicts), 1)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'counters_%'"), 9)
        // The triggers of the compact table count as before.
        try NodesTable(db: db).setPinned(id: pulled, false)
        try NodesTable(db: db).setPinned(id: local, true)
        XCTAssertEqual(try counters.value(.pinnedBytes), 20_000)
        try BlobsTable(db: db).delete(ofNode: local)
        try NodesTable(db: db).delete(id: local)
        XCTAssertEqual(try counters.values(), try counters.recount())
        XCTAssertEqual(try counters.value(.nodes), 2)
    }

    func testDoctorNamesAndCorrectsAWrongCounter() throws {
        _ = try cachedFile("/a", size: 10_000)
        try vault.db.run("UPDATE counters SET value = 999 WHERE name = 'nodes'")
        try vault.db.run("DELETE FROM counters WHERE name = 'cached_bytes'")
        XCTAssertEqual(try vault.nodeCount(), 999, "status reads the counter, not a count")
        let r = try vault.doctor()
        let fixed = r.repaired.filter { $0.hasPrefix("counter ") }
        XCTAssertEqual(fixed.count, 2, "\(r.repaired)")
        XCTAssertTrue(fixed.contains("counter nodes said 999, a recount found 2; corrected"), "\(fixed)")
        XCTAssertTrue(fixed.contains { $0.hasPrefix("counter cached_bytes said nothing, a recount found ") }, "\(fixed)")
        XCTAssertEqual(try vault.nodeCount(), 2)
        try assertCountersAgree("after doctor")
        XCTAssertEqual(try vault.doctor().repaired.filter { $0.hasPrefix("counter ") }, [], "nothing left to correct")
    }

    func testAFolderIsReadInPagesThroughTheParentNameIndex() throws {
        for (type, index) in [(NodeType.file, "nodes_folder_name"), (.folder, "nodes_folders")] {
            let plan = try vault.db.query("EXPLAIN QUERY PLAN " + NodesTable.childPageSQL(type), [Node.rootId, "", 10])
                .map { try $0.decode(String.self, "detail") }.joined(separator: "\n")
            XCTAssertTrue(plan.contains("USING INDEX \(index) (parent_id=? AND name>?)"), plan)
            XCTAssertFalse(plan.contains("TEMP B-TREE"), "read in the index's order, not sorted: \(plan)")
        }

        for name in ["d2", "d1", "d3"] { try vault.mkdir("/" + name) }
        for i in 0..<7 { _ = try vault.put(localFile: try file("f\(i)", size: 10), to: "/f\(6 - i)") }
        var pages: [[String]] = []
        try vault.forEachChildPage(of: Node.rootId, pageSize: 2) { pages.append($0.map(\.name)); return true }
        XCTAssertEqual(pages.flatMap { $0 }, try vault.children(of: Node.rootId).map(\.name), "folders first, then files, by name")
        XCTAssertEqual(pages.map(\.count).max(), 2)
        var seen = 0
        try vault.forEachChildPage(of: Node.rootId, pageSize: 2) { seen += $0.count; return false }
        XCTAssertEqual(seen, 2, "false stops the reading")
    }
}
