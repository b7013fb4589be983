import XCTest
import VaultSQL
@testable import VaultCore

/// The table types round-trip what they store, and a damaged row is refused by name rather than
/// read as a default.
final class TablesTests: VaultTestCase {
    func testNodesTablePlacesMovesAndDetaches() throws {
        let nodes = NodesTable(db: vault.db)
        let folder = try vault.mkdir("/docs")
        let n = try vault.put(localFile: try file("a", size: 10), to: "/docs/a.txt")
        XCTAssertEqual(try nodes.node(id: n.id), n)
        XCTAssertEqual(try nodes.child(of: folder.id, named: "a.txt")?.id, n.id)
        XCTAssertEqual(try nodes.children(of: folder.id, order: .name).map(\.id), [n.id])
        XCTAssertEqual(try nodes.placement(id: n.id)?.parentId, folder.id)
        try nodes.detach(id: n.id)
        XCTAssertNil(try nodes.placement(id: n.id)?.parentId)
        XCTAssertNil(try nodes.placement(id: "missing"))
        XCTAssertEqual(try nodes.count(), 3)
    }

    static func node(id: String, remoteId: String?, name: String, pinned: Bool = false) -> Node {
        Node(id: id, remoteId: remoteId, parentId: Node.rootId, name: name, type: .file, size: 0, version: 1, modifiedAt: 0, mimeType: nil,
             contentState: .notDownloaded, localPath: nil, pinned: pinned, lastAccessed: nil, pendingOp: nil, localVersion: 0, sha256: nil)
    }

    /// Nodes found by server id, in as many ids as a push asks at once (2,500: three statements
    /// of up to 999 ids, each bound once), whether the id is the node's own (pulled) or another (made here).
    func testNodesAreFoundByServerIdInLargeBatches() throws {
        let nodes = NodesTable(db: vault.db)
        var ids: [String: String] = [:]   // server id -> node id
        try vault.db.transaction {
            for i in 0..<2_500 {
                let own = i % 2 == 0
                let id = Vault.newId(), remote = own ? id : Vault.newId()
                try nodes.insert(Self.node(id: id, remoteId: remote, name: "n\(i)"))
                ids[remote] = id
            }
        }
        let found = try vault.nodes(withRemoteIds: Array(ids.keys) + [Vault.newId()])
        XCTAssertEqual(found.count, ids.count)
        XCTAssertEqual(Set(found.map(\.id)), Set(ids.values))
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: found.map { ($0.remoteId ?? "", $0.id) }), ids)
    }

    /// A node inserted pinned that already owns cache blobs (a conflict copy a pull makes) moves
    /// their bytes from cached to pinned: the counters still equal a recount.
    func testANodeInsertedPinnedCountsItsCacheBlobsAsPinned() throws {
        let id = Vault.newId(), blob = Vault.newId()
        try vault.db.transaction {
            try BlobsTable(db: vault.db).insert(BlobRecord(id: blob, area: .cache, size: 10, sealedSize: 4_096, sha256: String(repeating: "a", count: 64),
                                                           keyEpoch: 1, sealedSHA256: nil), nodeId: id, now: 0)
            try NodesTable(db: vault.db).insert(Self.node(id: id, remoteId: id, name: "copy", pinned: true))
        }
        XCTAssertEqual(try vault.countersTable.value(.pinnedBytes), 4_096)
        XCTAssertEqual(try vault.countersTable.value(.cachedBytes), 0)
        XCTAssertEqual(try vault.countersTable.values(), try vault.countersTable.recount())
    }

    func testKeyValueTablesAreSeparate() throws {
        let settings = KeyValueTable(db: vault.db, name: .settings), state = KeyValueTable(db: vault.db, name: .syncState)
        try settings.set("k", "1")
        XCTAssertEqual(try settings.value("k"), "1")
        XCTAssertNil(try state.value("k"))
        try settings.set("k", "2")
        XCTAssertEqual(try settings.all().filter { $0.key == "k" }.map(\.value), ["2"])
        try settings.set("k", nil)
        XCTAssertNil(try settings.value("k"))
    }

    func testTransfersTableUpdatesAndFinishesADownload() throws {
        let n = try vault.put(localFile: try file("b", size: 5), to: "/b")
        let transfers = TransfersTable(db: vault.db)
        let id = try transfers.insert(.download, nodeId: n.id, state: .running, blobId: nil, total: 5, requestId: nil, now: 1)
        try transfers.update(id, .progress(3), now: 2)
        XCTAssertEqual(try transfers.unfinishedDownload(nodeId: n.id, total: 5)?.bytesDone, 3)
        try transfers.markDownloadDone(id, now: 3)
        XCTAssertNil(try transfers.unfinishedDownload(nodeId: n.id, total: 5))
        XCTAssertEqual(try transfers.ofExistingFiles(unfinishedOnly: false).first { $0.id == id }?.state, .done)
    }

    func testADamagedRowIsRefusedNamingTheColumn() throws {
        let n = try vault.put(localFile: try file("c", size: 5), to: "/c")
        try vault.db.run("UPDATE nodes SET size = 'five' WHERE id = ?", [CompactColumns.key(n.id)])
        XCTAssertThrowsError(try vault.node(id: n.id)) {
            let e = $0 as? SQLError
            XCTAssertEqual(e?.kind, .decoding)
            XCTAssertTrue(e?.message.contains("\"size\"") ?? false, e?.message ?? "")
        }
    }
}
