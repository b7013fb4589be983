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
