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

    func testMigrationSevenFillsTheCountersOfAVaultMadeWithoutThem() throws {
        try vault.mkdir("/c")
        _ = try cachedFile("/c/a", size: 10_000)
        _ = try cachedFile("/c/b", size: 20_000)
        try vault.setPinned("/c/b", true)
        _ = try vault.put(localFile: try file("staged", size: 30_000), to: "/staged")
        try vault.recordConflicts([SyncMessage(kind: .editEdit, path: "/c/a", text: "both edited")])
        let expected = try vault.countersTable.recount()
        // The schema of a vault of version 6: no counters table, no triggers.
        for t in try vault.db.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'counters_%'") {
            try vault.db.execute("DROP TRIGGER \(try t.decode(String.self, "name"))")
        }
        try vault.db.execute("DROP TABLE counters")
        try vault.db.execute(MetadataSchemaTests.schema7Bases)
        try vault.db.setUserVersion(6)
        vault = nil
        let master = try Vault.readKeyslots(layout).0.unlock(password: password)
        vault = try Vault.open(layout: layout, masterKey: master)
        XCTAssertEqual(try vault.db.userVersion, MetadataSchema.migrator.latestVersion)
        XCTAssertEqual(try vault.countersTable.values(), expected)
        XCTAssertEqual(try vault.nodeCount(), 5)
        XCTAssertEqual(try vault.conflictCount(), 1)
        XCTAssertEqual(try vault.db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'counters_%'"), 9)
        _ = try vault.put(localFile: try file("after", size: 1_000), to: "/after")
        try assertCountersAgree("a write after the migration")
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
        let plan = try vault.db.query("EXPLAIN QUERY PLAN " + NodesTable.childPageSQL, [Node.rootId, "", NodeType.file, 10])
            .map { try $0.decode(String.self, "detail") }.joined(separator: "\n")
        XCTAssertTrue(plan.contains("USING INDEX nodes_parent_name (parent_id=? AND name>?)"), plan)
        XCTAssertFalse(plan.contains("TEMP B-TREE"), "read in the index's order, not sorted: \(plan)")

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
