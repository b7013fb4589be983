import XCTest
import VaultSQL
import VaultSyncPlan
import VaultPrimitives
@testable import VaultCore

/// The client's schema on the shared migrator: the same `user_version` record as before (one per
/// migration, ten of them), resumed from any version, and a newer database refused as before;
/// migration 8 (compact bases) keeps every base of a schema-7 database exactly, migration 9
/// (compact nodes) every node and every reference to one of a schema-8 database, and migration 10
/// (bases from their nodes) every base of a schema-9 one, kept whole when its node changes.
final class MetadataSchemaTests: XCTestCase {
    /// The totals counted from a database of an older schema (10: its outbox states and blob areas as text).
    func recountAsText(_ db: SQLDatabase, schema: Int = 10) throws -> [CountersTable.Name: Int64] {
        var out: [CountersTable.Name: Int64] = [:]
        for r in try db.query(CountersTable.recountSQL(schema: schema)) {
            if let name = CountersTable.Name(rawValue: try r.decode(String.self, "name")) { out[name] = try r.decode(Int64.self, "value") }
        }
        return out
    }

    func testMigratesAFreshDatabaseToFifteenOnceAndResumesAnOlderOne() throws {
        let db = try SQLDatabase(path: ":memory:")
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
        XCTAssertTrue(try MetadataSchema.isCurrent(db))
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'quarantine'"), 1)

        let older = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(3))).migrate(older)
        XCTAssertEqual(try older.userVersion, 3)
        XCTAssertFalse(try MetadataSchema.isCurrent(older))
        try MetadataSchema.migrate(older)
        XCTAssertEqual(try older.userVersion, 15)
        let schema = "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name)"
        XCTAssertEqual(try older.scalar(String.self, schema), try db.scalar(String.self, schema))
    }

    func testANewerDatabaseIsRefusedWithTheUpgradeHint() throws {
        let db = try SQLDatabase(path: ":memory:")
        try db.setUserVersion(16)
        XCTAssertFalse(try MetadataSchema.isCurrent(db))
        XCTAssertThrowsError(try MetadataSchema.migrate(db)) {
            let e = $0 as? VaultError
            XCTAssertEqual(e?.kind, .integrity)
            XCTAssertEqual(e?.message, "the metadata database is from a newer vault (schema 16)")
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
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE typeof(remote_id) = 'blob'"), 299)
        try MetadataSchema.migrate(db)   // read through today's table type (no node: every base whole)
        let table = RemoteBaseTable(db: db)
        for b in bases {
            XCTAssertEqual(try table.base(remoteId: b.remoteId), b)
            XCTAssertEqual(try table.contentSeq(remoteId: b.remoteId), b.contentSeq)
        }
        XCTAssertEqual(Set(try table.children(of: "root").map(\.remoteId)), Set(bases.prefix(20).map(\.remoteId)))
        XCTAssertEqual(try table.children(of: bases[1].remoteId).count, 20)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE from_node = 0"), 300)
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
        let (countedBefore, recountBefore) = (try counters.values(), try recountAsText(db))
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
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
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'nodes%' AND type != 'trigger'"), 4, "the table and its three indexes (nodes_folders since 13)")
        XCTAssertEqual(try db.scalar(Int.self, "PRAGMA foreign_key_check"), nil)
    }

    /// Bases as schema 9 wrote them, beside nodes: pulled nodes that hold the same fields (their
    /// bases then take them from the node), nodes that differ in one field, nodes made here (their
    /// server id another), bases without a node. After migration 10 every base reads back equal,
    /// children by parent too; a base keeps its fields when its node is renamed, moved, edited,
    /// detached or removed, and a change of another column (pinned, last access) leaves it taking them.
    func testMigrationTenKeepsEveryBaseAndTheTriggersKeepThemWhole() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(9))).migrate(db)
        var rng = SplitMix64(seed: 0x10)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        let nodes = NodesTable(db: db)
        try nodes.insertRoot(now: 0)
        var bases: [RemoteBase] = [], made: [Node] = []
        for i in 0..<240 {
            let folder = i % 8 == 0
            let parent = i < 16 ? Node.rootId : bases[(i / 16) * 8].remoteId
            let id = hex(16)
            var content: ContentRecord?
            if !folder {
                content = ContentRecord(blob: hex(16), device: hex(16), deviceName: i % 2 == 0 ? nil : "Laptop \(i)", mime: "text/plain",
                                        mtime: 1_700_000_000 + Int64(i), sealedSize: Int64(i) * 100 + 60, seq: Int64(i % 5),
                                        sha256: i == 9 ? hex(32).uppercased() : hex(32), size: Int64(i) * 10)
            }
            let b = RemoteBase(remoteId: id, parentId: parent, name: "b \(i) ✓", isFolder: folder, version: Int64(i),
                               recordSeq: Int64(i), contentSeq: Int64(i) * 2, content: content)
            bases.append(b)
            // The node: alike (most), one field apart, made here (another id), or none (i % 23 == 5).
            guard i % 23 != 5 else { continue }
            var n = Node(id: id, remoteId: id, parentId: parent, name: b.name, type: folder ? .folder : .file,
                         size: UInt64(content?.size ?? 0), version: b.version, modifiedAt: content?.mtime ?? 0, mimeType: content?.mime,
                         contentState: .notDownloaded, localPath: nil, pinned: false, lastAccessed: nil, pendingOp: nil,
                         localVersion: 0, sha256: content?.sha256)
            switch i % 11 {
            case 3: n.name += " (renamed here)"
            case 4 where !folder: n.modifiedAt += 1
            case 6 where !folder: n.sha256 = hex(32)
            case 7 where !folder: n.id = hex(16)
            default: break
            }
            try nodes.insert(n)
            made.append(n)
        }
        let pulled = made.filter { n in
            guard let b = bases.first(where: { $0.remoteId == n.id }) else { return false }
            return n.remoteId == n.id && n.parentId == b.parentId && n.name == b.name
                && (b.content.map { $0.mime == n.mimeType && $0.mtime == n.modifiedAt && $0.size == Int64(n.size) && $0.sha256 == n.sha256 } ?? true)
        }
        let alike = pulled.count
        for b in bases {
            try db.run("INSERT INTO remote_base(\(RemoteBaseTable.schema8Columns)) VALUES (?,?,?,?,?,?,?,?)", RemoteBaseTable.schema8Bindings(b))
        }
        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
        XCTAssertGreaterThan(alike, 150)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE from_node = 1"), alike)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE from_node = 1 AND (name IS NOT NULL OR parent_id IS NOT NULL)"), 0)
        let table = RemoteBaseTable(db: db)
        func assertAllRead(_ label: String) throws {
            for b in bases { XCTAssertEqual(try table.base(remoteId: b.remoteId), b, label) }
            for parent in [Node.rootId] + bases.filter(\.isFolder).map(\.remoteId) {
                XCTAssertEqual(Set(try table.children(of: parent).map(\.remoteId)),
                               Set(bases.filter { $0.parentId == parent }.map(\.remoteId)), "\(label): children of \(parent)")
            }
        }
        try assertAllRead("after the migration")

        // Columns no base takes from its node: nothing copied.
        try nodes.setPinned(id: pulled[1].id, true)
        try nodes.setLastAccessed(id: pulled[1].id, 42)
        try nodes.setContentState(id: pulled[1].id, .local)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE from_node = 1"), alike)
        // Every kind of change of a field a base takes: the base keeps what it was.
        let folderId = bases[8].remoteId
        let files = pulled.filter { $0.type == .file }
        try nodes.move(id: files[0].id, to: folderId, name: "moved", modifiedAt: 5)
        try nodes.setModifiedAt(id: files[1].id, 1)
        var edited = files[2]; edited.size = 1; edited.sha256 = hex(32)
        try nodes.setNewLocalContent(edited)
        try nodes.detach(id: files[3].id)
        var replaced = files[4]; replaced.name = "replaced"
        try nodes.replace(replaced)
        try db.run("UPDATE nodes SET mime_type = 'x/y' WHERE id = ?", [CompactColumns.key(files[5].id)])
        try nodes.delete(id: files[6].id)
        let folderNode = pulled.first { $0.type == .folder && $0.id != folderId && $0.id != bases[0].remoteId }!
        try nodes.move(id: folderNode.id, to: Node.rootId, name: "folder moved", modifiedAt: 5)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM remote_base WHERE from_node = 1"), alike - 8)
        try assertAllRead("after the nodes changed")

        // New bases: of a node alike, taking from it; of a node apart, or of none, whole.
        var fresh = bases[20]; fresh.version += 1
        try table.delete(remoteId: fresh.remoteId)
        try table.insert(fresh)
        var apart = bases[21]; apart.name = "not the node's"
        try table.delete(remoteId: apart.remoteId)
        try table.insert(apart)
        bases[20] = fresh; bases[21] = apart
        XCTAssertEqual(try db.scalar(Bool.self, "SELECT from_node FROM remote_base WHERE remote_id = ?", [CompactColumns.key(apart.remoteId)]), false)
        try assertAllRead("after new bases")
        XCTAssertEqual(try db.scalar(Int.self, "PRAGMA foreign_key_check"), nil)
    }

    /// Outbox entries as schema 10 wrote them (every op and state, JSON payloads of every shape:
    /// hex and UUID ids, odd names, flags, an unknown state), beside a tombstone and transfers:
    /// after migration 11 each reads back equal through the table type, the sequence goes on past
    /// the highest number ever used, the counters agree with a recount, a payload still names its
    /// tombstone, and the table is smaller.
    func testMigrationElevenKeepsEveryOutboxEntry() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(10))).migrate(db)
        var rng = SplitMix64(seed: 0x11)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        try NodesTable(db: db).insertRoot(now: 0)
        let ops: [OutboxOp] = [.createFolder, .upload, .move, .delete, .discardUpload]
        let states: [OutboxState] = OutboxState.allCases
        let gone = hex(16), uuidNode = UUID().uuidString.lowercased()
        var entries: [OutboxEntry] = []
        for i in 1...300 {
            var p = OutboxPayload()
            if i % 2 == 0 { p.name = i == 4 ? hex(16) : "name \(i) ✓ \"q\"" }
            if i % 3 == 0 { p.parentId = i == 6 ? gone : (i % 9 == 0 ? uuidNode : hex(16)) }
            if i % 4 == 0 { p.remoteId = hex(16) }
            if i % 5 == 0 { p.blobId = i % 10 == 0 ? UUID().uuidString.lowercased() : hex(16) }
            if i % 6 == 0 { p.size = i == 12 ? UInt64.max : UInt64(i) * 4096 }
            if i % 7 == 0 { p.sha256 = i == 14 ? hex(32).uppercased() : hex(32) }
            if i % 8 == 0 { p.mimeType = "text/plain" }
            if i % 11 == 0 { p.uploadId = "up-\(i)" }
            if i % 13 == 0 { p.replacesMove = i % 2 == 0 }
            if i % 17 == 0 { p.reseal = true }
            if i % 19 == 0 { p.clientId = hex(16) }
            let e = OutboxEntry(seq: Int64(i * 2), op: ops[i % ops.count], nodeId: i % 9 == 0 ? uuidNode : hex(16), payload: p,
                                baseVersion: i % 3 == 0 ? nil : Int64(i), requestId: UUID().uuidString.lowercased(), state: states[i % states.count],
                                attempts: i % 4, lastError: i % 5 == 1 ? "refused \(i)" : nil, sentAt: i % 6 == 1 ? Int64(i) : nil)
            entries.append(e)
            try db.run("""
                INSERT INTO outbox(seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at, created_at)
                VALUES (?,?,?,?,?,?,?,?,?,?,?)
                """, [e.seq, e.op.rawValue, CompactColumns.key(e.nodeId),
                      String(decoding: try JSONEncoder().encode(e.payload), as: UTF8.self), e.baseVersion, e.requestId,
                      e.state.rawValue, e.attempts, e.lastError, e.sentAt, Int64(i)])
        }
        // An entry in a state this version does not know (counted as failed), and the highest
        // number ever used gone with its entry.
        try db.run("INSERT INTO outbox(seq, op, node_id, payload, request_id, state, created_at) VALUES (900, 'move', ?, '{}', 'r-odd', 'later', 0)",
                   [CompactColumns.key(hex(16))])
        try db.run("INSERT INTO outbox(seq, op, node_id, payload, request_id, created_at) VALUES (1000, 'move', ?, '{}', 'r-top', 0)",
                   [CompactColumns.key(hex(16))])
        try db.run("DELETE FROM outbox WHERE seq = 1000")
        try TombstonesTable(db: db).put(Tombstone(nodeId: gone, remoteId: gone, isFolder: true, version: 3))
        try TombstonesTable(db: db).put(Tombstone(nodeId: hex(16), remoteId: nil, isFolder: false, version: 0))
        let counters = CountersTable(db: db)
        for (name, value) in try recountAsText(db) { try counters.set(name, value) }   // the rows above went in uncounted
        let countedBefore = try counters.values()
        let bytesBefore = try db.scalar(Int.self, "SELECT sum(length(payload) + length(op) + length(state)) FROM outbox") ?? 0

        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
        let table = OutboxTable(db: db)
        let read = try table.entries()
        XCTAssertEqual(read.count, entries.count + 1)
        for (want, got) in zip(entries, read) { XCTAssertEqual(got, want, "entry \(want.seq)") }
        XCTAssertEqual(read.last?.state, .failed, "an unknown state reads as it counted")
        XCTAssertEqual(try table.lastSeq(), 1000, "the sequence goes on past the highest number used")
        XCTAssertEqual(try counters.values(), countedBefore, "the migration changes no counter")
        XCTAssertEqual(try counters.recount(), countedBefore)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM outbox WHERE typeof(op) = 'integer' AND typeof(state) = 'integer' AND typeof(payload) = 'blob'"),
                       entries.count + 1)
        XCTAssertLessThan(try db.scalar(Int.self, "SELECT sum(length(payload) + 2) FROM outbox") ?? 0, bytesBefore / 2)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'outbox%' AND tbl_name = 'outbox'"), 2,
                       "the table and its node index (no request-id index)")
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'outbox_schema10'"), 0)
        // A payload that names a removed folder keeps its tombstone; the other one goes.
        try TombstonesTable(db: db).deleteSpent()
        XCTAssertEqual(try TombstonesTable(db: db).all().map(\.nodeId), [gone])
        // New entries go on after 1000, and the triggers count their states.
        try table.append(.upload, nodeId: hex(16), payload: OutboxPayload(name: "new"), baseVersion: nil, requestId: "r-new", now: 1)
        XCTAssertEqual(try table.lastSeq(), 1001)
        _ = try table.hold(nodeId: uuidNode, as: .paused)
        try table.delete(seq: 2)
        XCTAssertEqual(try counters.values(), try counters.recount())
    }

    /// Blobs as schema 11 wrote them (hex ids as TEXT, ids of other shapes, both areas, SHA-256s
    /// of both cases, with and without a sealed SHA-256), named by nodes, revisions and transfers:
    /// after migration 12 each reads back equal through the table types, every row that names a
    /// blob still finds it, rowids are kept, the counters agree with a recount, and the table is smaller.
    func testMigrationTwelveKeepsEveryBlobAndWhatNamesIt() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(11))).migrate(db)
        var rng = SplitMix64(seed: 0x12)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        try NodesTable(db: db).insertRoot(now: 0)
        var records: [(BlobRecord, String?, Int64)] = [], files: [(id: String, blob: String)] = []
        for i in 0..<120 {
            let nodeId = hex(16), blob = i == 7 ? "blob-\(i)" : hex(16)
            let rec = BlobRecord(id: blob, area: i % 3 == 0 ? .staging : .cache, size: UInt64(i) * 100, sealedSize: UInt64(i) * 100 + 4_096,
                                 sha256: i == 9 ? hex(32).uppercased() : hex(32), keyEpoch: UInt32(1 + i % 2), sealedSHA256: i % 2 == 0 ? hex(32) : nil)
            let owner: String? = i % 10 == 5 ? nil : nodeId
            if let owner, i % 4 != 3 {
                // The node, as schema 11 stored it: the blob id as TEXT in local_path.
                try db.run("""
                    INSERT INTO nodes(id, remote_id, parent_id, name, folder, size, modified_at, content_state, local_path, pinned, sha256)
                    VALUES (?, X'', ?, ?, 0, ?, 0, 2, ?, ?, ?)
                    """, [CompactColumns.key(owner), CompactColumns.key(Node.rootId), "f\(i)", Int64(rec.size), blob, i % 5 == 0, CompactColumns.digest(rec.sha256)])
                files.append((owner, blob))
            }
            try db.run("""
                INSERT INTO blobs(rowid, id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256) VALUES (?,?,?,?,?,?,?,?,?,?)
                """, [Int64(i * 3 + 1), blob, CompactColumns.key(owner), rec.area.rawValue, Int64(rec.size), Int64(rec.sealedSize), rec.sha256,
                      Int64(rec.keyEpoch), Int64(i), rec.sealedSHA256])
            records.append((rec, owner, Int64(i * 3 + 1)))
        }
        let kept = records[4].0.id, partial = hex(16)
        try db.run("INSERT INTO revisions(id, node_id, size, modified_at, blob_id) VALUES ('r1', ?, 1, 0, ?)", [CompactColumns.key(files[0].id), kept])
        try db.run("INSERT INTO transfers(node_id, direction, state, blob_id, created_at, updated_at) VALUES (?, 'download', 'running', ?, 0, 0)",
                   [CompactColumns.key(files[1].id), partial])
        let counters = CountersTable(db: db)
        for (name, value) in try recountAsText(db, schema: 11) { try counters.set(name, value) }
        let countedBefore = try counters.values()
        let bytesBefore = try db.scalar(Int.self, "SELECT sum(length(id) + length(area) + length(sha256) + coalesce(length(sealed_sha256), 0)) FROM blobs") ?? 0

        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
        let table = BlobsTable(db: db)
        for (rec, owner, rowid) in records {
            XCTAssertEqual(try table.record(id: rec.id), rec, "blob \(rec.id)")
            XCTAssertEqual(try table.area(id: rec.id), rec.area)
            XCTAssertEqual(try table.sealedSHA256(id: rec.id), rec.sealedSHA256)
            XCTAssertEqual(try db.scalar(Int64.self, "SELECT rowid FROM blobs WHERE id = ?", [CompactColumns.key(rec.id)]), rowid, "rowid kept")
            if let owner { XCTAssertTrue(try table.blobs(ofNode: owner).contains { $0.id == rec.id && $0.area == rec.area }) }
        }
        XCTAssertEqual(Set(try table.stagingIds()), Set(records.filter { $0.0.area == .staging }.map(\.0.id)))
        for f in files {
            XCTAssertEqual(try NodesTable(db: db).node(id: f.id)?.localPath, f.blob)
            XCTAssertEqual(try NodesTable(db: db).syncedFile(withBlob: f.blob)?.id, f.id, "a node still finds its blob")
        }
        XCTAssertEqual(try table.cacheItems().filter(\.head).count, files.filter { f in records.contains { $0.0.id == f.blob && $0.0.area == .cache } }.count,
                       "a cached blob is still its node's head content")
        XCTAssertEqual(try RevisionsTable(db: db).blobIds(), [kept])
        XCTAssertEqual(try TransfersTable(db: db).unfinishedDownloadBlobs(), [partial])
        XCTAssertEqual(try counters.values(), countedBefore, "the migration changes no counter")
        XCTAssertEqual(try counters.recount(), countedBefore)
        XCTAssertLessThan(try db.scalar(Int.self, "SELECT sum(length(id) + 1 + length(sha256) + coalesce(length(sealed_sha256), 0)) FROM blobs") ?? 0,
                          bytesBefore * 6 / 10)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM blobs WHERE typeof(id) = 'blob' AND typeof(area) = 'integer'"), records.count - 1)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'blobs_schema11'"), 0)
        // The triggers count on the codes: a blob moved, a node pinned, a blob and a node removed.
        try table.markCached(id: records[0].0.id)
        try NodesTable(db: db).setPinned(id: files[2].id, true)
        try table.delete(id: records[3].0.id)
        try NodesTable(db: db).delete(id: files[3].id)
        XCTAssertEqual(try counters.values(), try counters.recount())
        XCTAssertEqual(try db.scalar(Int.self, "PRAGMA foreign_key_check"), nil)
    }

    /// Entries as schema 13 wrote them: of files whose node holds the entry's name, parent, blob,
    /// size, SHA-256 and mime alike, of nodes that hold other values, of nodes that are gone, and
    /// with request ids of other shapes. After migration 14 each reads back equal, takes from its
    /// node only what the node holds alike, and stays equal when its node is renamed, moved,
    /// given new content or removed; request ids are 16 bytes in the outbox and the transfers and
    /// still join; a tombstone named by a parent the entry takes from its node is kept; the
    /// outbox is smaller.
    func testMigrationFourteenTakesFromItsNodeWhatItSharesAndKeepsEveryEntry() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(13))).migrate(db)
        var rng = SplitMix64(seed: 0x14)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        let nodes = NodesTable(db: db)
        try nodes.insertRoot(now: 0)
        func file(_ id: String, in parent: String, _ name: String, blob: String, size: UInt64, sha: String, mime: String?) -> Node {
            Node(id: id, remoteId: nil, parentId: parent, name: name, type: .file, size: size, version: 0, modifiedAt: 7, mimeType: mime,
                 contentState: .local, localPath: blob, pinned: false, lastAccessed: nil, pendingOp: .upload, localVersion: 1, sha256: sha)
        }
        let folder = hex(16), other = hex(16), gone = hex(16)
        for f in [folder, other, gone] {
            try nodes.insert(Node(id: f, remoteId: nil, parentId: Node.rootId, name: "d-\(f.prefix(4))", type: .folder, size: 0, version: 0,
                                  modifiedAt: 0, mimeType: nil, contentState: .notDownloaded, localPath: nil, pinned: false, lastAccessed: nil,
                                  pendingOp: nil, localVersion: 0, sha256: nil))
        }
        var entries: [OutboxEntry] = [], files: [Node] = []
        for i in 1...120 {
            let n = file(hex(16), in: i % 5 == 0 ? other : folder, "f\(i).txt", blob: hex(16), size: UInt64(i) * 4096, sha: hex(32),
                         mime: i % 7 == 0 ? nil : "text/plain")
            if i % 6 != 0 { try nodes.insert(n); files.append(n) }   // every sixth entry's node is gone
            var p = OutboxPayload(name: n.name, parentId: n.parentId, blobId: n.localPath, size: n.size, sha256: n.sha256, mimeType: n.mimeType,
                                  clientId: i % 2 == 0 ? hex(16) : nil)
            if i % 4 == 0 { p.name = "other \(i)" }              // differs from its node: kept in its column
            if i % 9 == 0 { p.parentId = gone }                  // a parent since removed
            if i % 10 == 0 { p.size = UInt64.max; p.sha256 = hex(32).uppercased() }
            if i % 11 == 0 { p.blobId = nil; p.remoteId = hex(16); p.uploadId = "up-\(i)"; p.replacesMove = true }
            let e = OutboxEntry(seq: Int64(i * 3), op: i % 11 == 0 ? .move : .upload, nodeId: n.id, payload: p, baseVersion: i % 3 == 0 ? nil : Int64(i),
                                requestId: i == 13 ? "r-odd" : UUID().uuidString.lowercased(), state: OutboxState.allCases[i % 5],
                                attempts: i % 4, lastError: i % 5 == 1 ? "refused \(i)" : nil, sentAt: i % 6 == 1 ? Int64(i) : nil)
            entries.append(e)
            try db.run("""
                INSERT INTO outbox(seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at, created_at)
                VALUES (?,?,?,?,?,?,?,?,?,?,?)
                """, [e.seq, OutboxTable.Codes.code(e.op), CompactColumns.key(e.nodeId), OutboxTable.stored(e.payload), e.baseVersion, e.requestId,
                      OutboxTable.Codes.code(e.state), e.attempts, e.lastError, e.sentAt, Int64(i)])
        }
        try db.run("INSERT INTO outbox(seq, op, node_id, payload, request_id, created_at) VALUES (999, 2, ?, ?, 'r-top', 0)",
                   [CompactColumns.key(hex(16)), OutboxTable.stored(OutboxPayload())])
        try db.run("DELETE FROM outbox WHERE seq = 999")
        try TombstonesTable(db: db).put(Tombstone(nodeId: gone, remoteId: gone, isFolder: true, version: 3))
        let upload = entries[1]
        _ = try TransfersTable(db: db).insert(.upload, nodeId: upload.nodeId, state: .running, blobId: upload.payload.blobId,
                                              total: 10, requestId: upload.requestId, now: 0)
        let stray = UUID().uuidString.lowercased()
        _ = try TransfersTable(db: db).insert(.upload, nodeId: upload.nodeId, state: .running, blobId: nil, total: 10, requestId: stray, now: 0)
        try db.run("UPDATE transfers SET request_id = ? WHERE request_id = ?", [upload.requestId, CompactColumns.requestKey(upload.requestId)])
        try db.run("UPDATE transfers SET request_id = ? WHERE request_id = ?", [stray, CompactColumns.requestKey(stray)])
        let counters = CountersTable(db: db)
        for (name, value) in try counters.recount() { try counters.set(name, value) }
        let countedBefore = try counters.values()
        let bytesBefore = try db.scalar(Int.self, "SELECT sum(length(payload) + length(request_id)) FROM outbox") ?? 0

        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
        let table = OutboxTable(db: db)
        func assertEntriesKept(_ label: String) throws {
            let read = try table.entries()
            XCTAssertEqual(read.count, entries.count, label)
            for (want, got) in zip(entries, read) { XCTAssertEqual(got, want, "\(label): entry \(want.seq)") }
        }
        try assertEntriesKept("after the migration")
        XCTAssertEqual(try table.lastSeq(), 999, "the sequence goes on past the highest number used")
        XCTAssertEqual(try counters.values(), countedBefore, "the migration changes no counter")
        XCTAssertEqual(try counters.recount(), countedBefore)
        // The first entry's node holds everything alike: all six fields from the node, none stored.
        XCTAssertEqual(try db.scalar(Int64.self, "SELECT from_node FROM outbox WHERE seq = 3"), 63)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM outbox WHERE seq = 3 AND coalesce(name, parent_id, blob_id, size, sha256, mime) IS NULL"), 1)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM outbox WHERE seq = 12 AND from_node & 1 = 0 AND name = 'other 4'"), 1)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM outbox WHERE seq = 18 AND from_node = 0"), 1, "an entry whose node is gone keeps its own")
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM outbox WHERE typeof(request_id) = 'blob' AND length(request_id) = 16"), entries.count - 1)
        XCTAssertLessThan(try db.scalar(Int.self, "SELECT sum(length(payload) + length(request_id) + coalesce(length(name), 0) + coalesce(length(parent_id), 0) + coalesce(length(blob_id), 0) + coalesce(length(sha256), 0) + coalesce(length(mime), 0)) FROM outbox") ?? 0,
                          bytesBefore * 6 / 10)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'outbox_schema13'"), 0)
        // The transfers' request ids: 16 bytes, and still found by the entry's.
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM transfers WHERE typeof(request_id) = 'blob'"), 2)
        XCTAssertEqual(try TransfersTable(db: db).upload(requestId: upload.requestId)?.requestId, upload.requestId)
        XCTAssertEqual(try TransfersTable(db: db).deleteUploadsWithoutEntry(), 1, "the stray upload (no entry) goes, the entry's stays")
        XCTAssertNotNil(try TransfersTable(db: db).upload(requestId: upload.requestId))
        // A tombstone named only by the parent entries take from their nodes is still needed.
        let child = files.first { $0.parentId == folder }!
        try db.run("DELETE FROM outbox WHERE parent_id = ?", [CompactColumns.key(gone)])
        try TombstonesTable(db: db).put(Tombstone(nodeId: folder, remoteId: nil, isFolder: true, version: 0))
        try TombstonesTable(db: db).deleteSpent()
        XCTAssertEqual(Set(try TombstonesTable(db: db).all().map(\.nodeId)), [folder], "the folder its children's entries take as their parent")
        entries.removeAll { $0.payload.parentId == gone }
        // The node changes every field its entries take from it, or goes: the entries stay as they were.
        try nodes.move(id: child.id, to: other, name: "moved.txt", modifiedAt: 9)
        var renewed = child
        renewed.localPath = hex(16); renewed.size = 1; renewed.sha256 = hex(32); renewed.mimeType = "image/png"
        try nodes.setNewLocalContent(renewed)
        try assertEntriesKept("after its node moved and got new content")
        XCTAssertEqual(try db.scalar(Int64.self, "SELECT from_node FROM outbox WHERE node_id = ?", [CompactColumns.key(child.id)]), 0)
        for f in files.dropFirst(3) { try nodes.delete(id: f.id) }
        try assertEntriesKept("after the nodes went")
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM outbox WHERE from_node != 0"), 2, "the two files left keep taking from their nodes")
        // New entries: what their node holds alike is taken from it.
        let fresh = file(hex(16), in: folder, "new.txt", blob: hex(16), size: 5, sha: hex(32), mime: "text/plain")
        try nodes.insert(fresh)
        try table.append(.upload, nodeId: fresh.id, payload: OutboxPayload(name: fresh.name, parentId: folder, blobId: fresh.localPath, size: 5,
                                                                           sha256: fresh.sha256, mimeType: "text/plain"),
                         baseVersion: nil, requestId: UUID().uuidString.lowercased(), now: 1)
        XCTAssertEqual(try table.lastSeq(), 1000)
        XCTAssertEqual(try db.scalar(Int64.self, "SELECT from_node FROM outbox WHERE seq = 1000"), 63)
        XCTAssertEqual(try table.entry(seq: 1000)?.payload.name, "new.txt")
        XCTAssertEqual(try counters.values(), try counters.recount())
        XCTAssertEqual(try db.scalar(Int.self, "PRAGMA foreign_key_check"), nil)
    }

    /// Blobs as schema 14 wrote them: of a node that holds the blob's SHA-256 alike, of one that
    /// holds another (an older revision's blob), of none. After migration 15 each reads back
    /// equal with its rowid, only the first kind takes its SHA-256 from its node, and each keeps
    /// its SHA-256 when its node gets new content, is removed, or the blob is given to another
    /// node; a new blob of a node takes the node's.
    func testMigrationFifteenTakesABlobsSHA256FromItsNode() throws {
        let db = try SQLDatabase(path: ":memory:")
        try SQLMigrator(Array(MetadataSchema.migrator.migrations.prefix(14))).migrate(db)
        var rng = SplitMix64(seed: 0x15)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        let nodes = NodesTable(db: db)
        try nodes.insertRoot(now: 0)
        var records: [(BlobRecord, String?)] = [], files: [Node] = []
        for i in 0..<60 {
            let rec = BlobRecord(id: hex(16), area: i % 3 == 0 ? .staging : .cache, size: UInt64(i) * 10, sealedSize: UInt64(i) * 10 + 4_096,
                                 sha256: i == 9 ? hex(32).uppercased() : hex(32), keyEpoch: 1, sealedSHA256: i % 2 == 0 ? hex(32) : nil)
            var owner: String? = nil
            if i % 5 != 4 {
                let n = Node(id: hex(16), remoteId: nil, parentId: Node.rootId, name: "f\(i)", type: .file, size: rec.size, version: 0, modifiedAt: 0,
                             mimeType: nil, contentState: .local, localPath: rec.id, pinned: false, lastAccessed: nil, pendingOp: nil,
                             localVersion: 1, sha256: i % 5 == 3 ? hex(32) : rec.sha256)   // every fifth from 3: another content
                try nodes.insert(n)
                files.append(n)
                owner = n.id
            }
            try db.run("""
                INSERT INTO blobs(rowid, id, node_id, area, size, sealed_size, sha256, key_epoch, created_at, sealed_sha256) VALUES (?,?,?,?,?,?,?,?,?,?)
                """, [Int64(i * 2 + 5), CompactColumns.key(rec.id), CompactColumns.key(owner), BlobsTable.Codes.code(rec.area), Int64(rec.size),
                      Int64(rec.sealedSize), CompactColumns.digest(rec.sha256), Int64(rec.keyEpoch), Int64(i), CompactColumns.digest(rec.sealedSHA256)])
            records.append((rec, owner))
        }
        let counters = CountersTable(db: db)
        for (name, value) in try counters.recount() { try counters.set(name, value) }
        let countedBefore = try counters.values()
        let bytesBefore = try db.scalar(Int.self, "SELECT sum(length(sha256)) FROM blobs") ?? 0

        try MetadataSchema.migrate(db)
        XCTAssertEqual(try db.userVersion, 15)
        let table = BlobsTable(db: db)
        func assertKept(_ label: String) throws {
            for (i, (rec, _)) in records.enumerated() {
                XCTAssertEqual(try table.record(id: rec.id), rec, "\(label): blob \(i)")
                XCTAssertEqual(try db.scalar(Int64.self, "SELECT rowid FROM blobs WHERE id = ?", [CompactColumns.key(rec.id)]), Int64(i * 2 + 5))
            }
        }
        try assertKept("after the migration")
        let alike = records.enumerated().filter { $0.offset % 5 < 3 }.count   // the nodes that hold their blob's SHA-256
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM blobs WHERE sha256 IS NULL"), alike)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT sum(length(sha256)) FROM blobs") ?? 0, bytesBefore - alike * 32)
        XCTAssertEqual(try counters.values(), countedBefore, "the migration changes no counter")
        XCTAssertEqual(try counters.recount(), countedBefore)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'blobs_schema14'"), 0)
        // The nodes change: new content, removed, a blob given to another node. Every blob keeps its SHA-256.
        var renewed = files[0]
        renewed.localPath = hex(16); renewed.sha256 = hex(32)
        try nodes.setNewLocalContent(renewed)
        try nodes.delete(id: files[1].id)
        try table.setNode(id: records[2].0.id, files[5].id)
        try assertKept("after the nodes changed")
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM blobs WHERE sha256 IS NULL"), alike - 3)
        // A new blob of a node that holds its SHA-256 takes it from the node; one of no node holds its own.
        let fresh = BlobRecord(id: hex(16), area: .staging, size: 1, sealedSize: 4_097, sha256: renewed.sha256!, keyEpoch: 1, sealedSHA256: nil)
        try table.insert(fresh, nodeId: renewed.id, now: 1)
        let loose = BlobRecord(id: hex(16), area: .cache, size: 1, sealedSize: 4_097, sha256: hex(32), keyEpoch: 1, sealedSHA256: nil)
        try table.insert(loose, nodeId: nil, now: 1)
        XCTAssertEqual(try table.record(id: fresh.id), fresh)
        XCTAssertEqual(try table.record(id: loose.id), loose)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM blobs WHERE id = ? AND sha256 IS NULL", [CompactColumns.key(fresh.id)]), 1)
        let resealed = BlobRecord(id: hex(16), area: .cache, size: 1, sealedSize: 4_097, sha256: renewed.sha256!, keyEpoch: 2, sealedSHA256: nil)
        try table.insert(resealed, area: .cache, replacing: fresh.id, now: 2)
        XCTAssertEqual(try table.record(id: resealed.id), resealed)
        XCTAssertEqual(try db.scalar(Int.self, "SELECT count(*) FROM blobs WHERE id = ? AND sha256 IS NULL", [CompactColumns.key(resealed.id)]), 1)
        XCTAssertThrowsError(try db.run("UPDATE blobs SET node_id = NULL WHERE id = ?", [CompactColumns.key(fresh.id)]), "a blob that takes its node's SHA-256 keeps its node")
        XCTAssertEqual(try counters.values(), try counters.recount())
    }

    /// A compact payload reads back exactly, is far smaller than its JSON, and a damaged one is
    /// an error naming the column.
    func testACompactPayloadRoundTripsAndADamagedOneIsAnError() throws {
        let full = OutboxPayload(name: "Grüße ✓.txt", parentId: String(repeating: "ab", count: 16), remoteId: "root",
                                 blobId: String(repeating: "cd", count: 16), size: 4096, sha256: String(repeating: "ef", count: 32),
                                 mimeType: "text/plain", uploadId: "u-1", replacesMove: false, reseal: true, clientId: String(repeating: "01", count: 16))
        for p in [full, OutboxPayload(), OutboxPayload(size: 0), OutboxPayload(replacesMove: true)] {
            let bytes = CompactColumns.payload(p)
            XCTAssertEqual(try CompactColumns.payload(bytes, column: "payload"), p)
        }
        let bytes = CompactColumns.payload(full)
        XCTAssertLessThan(bytes.count * 2, try JSONEncoder().encode(full).count)
        let key = [UInt8](repeating: 0xab, count: 16)
        XCTAssertTrue((0...(bytes.count - 16)).contains { Array(bytes[$0..<($0 + 16)]) == key }, "a node id is its key's bytes")
        var badFlag = CompactColumns.payload(OutboxPayload(reseal: true)); badFlag[badFlag.count - 1] = 2
        let bads: [[UInt8]] = [Array(bytes.dropLast()), bytes + [0], [1] + Array(bytes.dropFirst()), [3, 0x80, 0x80, 0x80, 0x01], badFlag, []]
        for bad in bads {
            XCTAssertThrowsError(try CompactColumns.payload(bad, column: "payload")) {
                XCTAssertEqual(($0 as? SQLError)?.kind, .decoding)
            }
        }
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
        // Format 2 (schema 10's bases): the same, its mime, mtime, size and SHA-256 given beside it.
        let part = CompactColumns.blobRecord(c)
        func open(_ b: [UInt8]) throws -> ContentRecord {
            try CompactColumns.content(blobRecord: b, mime: c.mime, mtime: c.mtime, size: c.size, sha256: c.sha256, column: "content")
        }
        XCTAssertEqual(try open(part), c)
        for bad in [Array(part.dropLast()), part + [0], [1] + part.dropFirst(), bytes, [UInt8]()] {
            XCTAssertThrowsError(try open(bad)) { XCTAssertEqual(($0 as? SQLError)?.kind, .decoding) }
        }
    }
}
