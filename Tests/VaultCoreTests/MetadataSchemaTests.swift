import XCTest
import VaultSQL
import VaultSyncPlan
import VaultPrimitives
@testable import VaultCore

/// The client's schema on the shared migrator: the same `user_version` record as before (one per
/// migration, nine of them), resumed from any version, and a newer database refused as before;
/// migration 8 (compact bases) keeps every base of a schema-7 database exactly, and migration 9
/// (compact nodes) every node and every reference to one of a schema-8 database.
final class MetadataSchemaTests: XCTestCase {
    func testMigratesAFreshDatabaseToNineOnceAndResumesAnOlderOne() throws {
        let db = try SQLDatabase(path: ":memory:")
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 9)
        XCTAssertTrue(try MetadataSchema.isCurrent(db))
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'quarantine'"), 1)

        let older = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(3))).migrate(older)
        XCTAssertEqual(try older.userVersion, 3)
        XCTAssertFalse(try MetadataSchema.isCurrent(older))
        try MetadataSchema.migrate(older)
        XCTAssertEqual(try older.userVersion, 9)
        let schema = "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name)"
        XCTAssertEqual(try older.scalar(String.self, schema), try db.scalar(String.self, schema))
    }

    func testANewerDatabaseIsRefusedWithTheUpgradeHint() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.setUserVersion(10)
        XCTAssertFalse(try MetadataSchema.isCurrent(db))
        XCTAssertThrowsError(try MetadataSchema.migrate(db)) {
            let e = $0 as? VaultError
            XCTAssertEqual(e?.kind, .integrity)
            XCTAssertEqual(e?.message, "the metadata database is from a newer vault (schema 10)")
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
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(8))).migrate(db)
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

    /// Nodes as schema 8 wrote them (hex ids of pulled nodes, UUIDs of nodes made here, `root`,
    /// every state and pending op, SHA-256s of both cases), with blobs, revisions, outbox
    /// entries, transfers and tombstones referring to them: after migration 9 the same nodes read
    /// back through the table type, the references still find them, and the ids are keys.
    func testMigrationNineKeepsEveryNodeOfASchemaEightDatabase() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(8))).migrate(db)
        var rng = SplitMix64(seed: 0x9)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        let states: [ContentState] = [.notDownloaded, .downloading, .local, .stale]
        let ops: [PendingOp?] = [nil, .create, .upload, .move, .sync]
        var nodes = [Node.root]
        try db.run("INSERT INTO nodes(id, parent_id, name, type, modified_at, content_state) VALUES ('root', NULL, '', 'folder', 0, 'LOCAL')")
        for i in 1..<200 {
            let folder = i % 10 == 1
            let id = i % 3 == 0 ? UUID().uuidString.lowercased() : hex(16)
            let parent = i < 20 ? Node.rootId : nodes[(i / 20) * 10 + 1].id
            let remote: String? = i % 3 == 0 ? (i % 2 == 0 ? hex(16) : nil) : id
            let n = Node(id: id, remoteId: remote, parentId: parent, name: "n \(i) ✓", type: folder ? .folder : .file,
                         size: UInt64(i) * 1_000, version: Int64(i), modifiedAt: 1_700_000_000 + Int64(i), mimeType: folder ? nil : "text/plain",
                         contentState: states[i % 4], localPath: i % 5 == 0 ? "blob-\(i)" : nil, pinned: i % 7 == 0,
                         lastAccessed: i % 2 == 0 ? Int64(i) : nil, pendingOp: ops[i % 5], localVersion: Int64(i % 3),
                         sha256: folder ? nil : (i == 13 ? hex(32).uppercased() : hex(32)))
            nodes.append(n)
            try db.run("""
                INSERT INTO nodes(id, remote_id, parent_id, name, type, size, version, modified_at, mime_type, content_state, local_path,
                  pinned, last_accessed, pending_op, local_version, sha256, record_seq, content_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
                """, [n.id, n.remoteId, n.parentId, n.name, n.type.rawValue, Int64(n.size), n.version, n.modifiedAt, n.mimeType,
                      n.contentState.rawValue, n.localPath, n.pinned, n.lastAccessed, n.pendingOp?.rawValue, n.localVersion, n.sha256,
                      Int64(i), Int64(i * 2)])
        }
        let file = nodes[2], local = nodes[3]
        try db.run("INSERT INTO blobs(id, node_id, area, size, sealed_size, sha256, key_epoch, created_at) VALUES ('b', ?, 'cache', 1, 2, 'x', 1, 0)", [file.id])
        try db.run("INSERT INTO revisions(id, node_id, size, modified_at) VALUES ('r', ?, 1, 0)", [file.id])
        try db.run("INSERT INTO outbox(op, node_id, payload, request_id, created_at) VALUES ('upload', ?, '{}', 'q', 0)", [file.id])
        try db.run("INSERT INTO transfers(node_id, direction, state, created_at, updated_at) VALUES (?, 'download', 'queued', 0, 0)", [file.id])
        try db.run("INSERT INTO outbox_tombstones(node_id, type) VALUES (?, 'file')", [local.id])

        let counters = CountersTable(db: db)
        let (countedBefore, recountBefore) = (try counters.values(), try counters.recount())
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 9)
        XCTAssertEqual(try counters.values(), countedBefore, "the migration changes no counter")
        XCTAssertEqual(try counters.recount(), recountBefore, "the recount joins the keys as it joined the ids")
        let table = NodesTable(db: db)
        for (i, n) in nodes.enumerated() {
            XCTAssertEqual(try table.node(id: n.id), n, "node \(i)")
            if let r = n.remoteId { XCTAssertEqual(try table.node(remoteId: r)?.id, n.id, "node \(i) by its server id") }
            XCTAssertEqual(try table.seqs(id: n.id)?.record, Int64(i))
        }
        XCTAssertEqual(try table.synced().map(\.id), nodes.filter { $0.remoteId != nil && $0.id != Node.rootId }.map(\.id), "insertion order kept")
        XCTAssertEqual(try table.children(of: Node.rootId, order: .name).count, 19)
        XCTAssertEqual(try table.countReachable().onTree, 199)
        XCTAssertEqual(try BlobsTable(db: db).blobs(ofNode: file.id).map(\.id), ["b"])
        XCTAssertEqual(try BlobsTable(db: db).cacheItems().first?.nodeId, file.id)
        XCTAssertEqual(try RevisionsTable(db: db).localRevisions(nodeId: file.id).map(\.id), ["r"])
        XCTAssertEqual(try OutboxTable(db: db).entries(nodeId: file.id).count, 1)
        XCTAssertEqual(try TransfersTable(db: db).ofExistingFiles(unfinishedOnly: true).map(\.nodeId), [file.id])
        XCTAssertEqual(try TombstonesTable(db: db).tombstone(nodeId: local.id)?.nodeId, local.id)
        // Pulled nodes keep their server id once: the key of the node's own id.
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM nodes WHERE remote_id = X''"), nodes.filter { $0.remoteId == $0.id }.count)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM nodes WHERE typeof(id) = 'blob' AND length(id) = 16"),
                       nodes.filter { $0.id.count == 32 }.count)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'nodes%'"), 3, "the table and its two indexes")
        XCTAssertEqual(try db.scalar(Int.self, "PRAGMA foreign_key_check"), nil)
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
