import XCTest
@testable import VaultCore
@testable import VaultKeys

/// A listing into an empty vault runs without row-by-row foreign-key checks; its commit's tree
/// check refuses what they would have (nothing applied), and the checks are on again afterwards,
/// whatever the outcome. A listing into a vault that holds nodes keeps them on throughout.
final class ListingKeysTests: VaultTestCase {
    private func node(_ id: String, in parent: String, folder: Bool) -> Node {
        Node(id: id, remoteId: id, parentId: parent, name: id, type: folder ? .folder : .file, size: 0, version: 1, modifiedAt: 0,
             mimeType: nil, contentState: folder ? .local : .notDownloaded, localPath: nil, pinned: false, lastAccessed: nil,
             pendingOp: nil, localVersion: 0, sha256: nil)
    }

    private var foreignKeys: Int { (try? vault.db.scalar("PRAGMA foreign_keys")?.int) ?? -1 }
    private var nodeCount: Int { (try? vault.db.scalar("SELECT count(*) FROM nodes")?.int) ?? -1 }

    func testAFreshListingIsCheckedAtItsCommitAndKeysComeBackOn() throws {
        let store = vault.pullStore()
        try store.beginListing()
        XCTAssertEqual(foreignKeys, 0, "an empty vault's listing: no row-by-row checks")
        try store.apply([.put(node(String(repeating: "b", count: 32), in: String(repeating: "a", count: 32), folder: false))], cursor: nil)
        XCTAssertThrowsError(try store.endListing(commit: true)) { XCTAssertTrue("\($0)".contains("never shows"), "\($0)") }
        XCTAssertEqual(foreignKeys, 1)
        XCTAssertEqual(nodeCount, 1, "nothing applied: only the root")

        try store.beginListing()
        XCTAssertEqual(foreignKeys, 0)
        try store.apply([.put(node(String(repeating: "c", count: 32), in: Node.rootId, folder: true))], cursor: nil)
        try store.endListing(commit: true)
        XCTAssertEqual(foreignKeys, 1)
        XCTAssertEqual(nodeCount, 2)

        try store.beginListing()
        XCTAssertEqual(foreignKeys, 1, "a vault that holds nodes: checked throughout")
        try store.endListing(commit: false)
        XCTAssertEqual(foreignKeys, 1)
    }
}
