import XCTest
import VaultPrimitives
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

    /// The written keys never answer "absent" for a key written, whatever the order (ids in
    /// order, out of order, of other shapes, names in folders), and answer it for an id above
    /// every one written of its kind; a node id written says nothing of a base of that id.
    func testWrittenKeysNeverDenyAKeyWritten() throws {
        var rng = SplitMix64(seed: 0x3)
        func hex() -> String { (0..<16).map { _ in String(format: "%02x", Int(rng.next() & 0xFF)) }.joined() }
        var keys = WrittenKeys()
        var written: [(WrittenKeys.Kind, String, String)] = []
        let ids = (0..<5_000).map { _ in hex() }
        for (i, id) in ids.sorted().enumerated() {
            let kind: WrittenKeys.Kind = [.nodeId, .remoteId, .base][i % 3]
            written.append((kind, i % 97 == 0 ? "odd-\(i)" : id, ""))
            written.append((.child, ids[i / 10], "name \(i)"))
        }
        for (i, id) in ids.prefix(200).enumerated() { written.append((.nodeId, id, "")); written.append((.parent, id, "\(i)")) }   // out of order
        for (k, a, b) in written { keys.insert(k, a, b) }
        for (k, a, b) in written { XCTAssertTrue(keys.mayContain(k, a, b), "\(k) \(a) \(b)") }
        let top = String(repeating: "f", count: 32)
        for kind in [WrittenKeys.Kind.nodeId, .remoteId, .base] { XCTAssertFalse(keys.mayContain(kind, top), "\(kind) above every id written") }
        XCTAssertFalse(WrittenKeys().mayContain(.nodeId, ids[0]), "nothing written: nothing there")
        var fresh = WrittenKeys()
        fresh.insert(.nodeId, ids.sorted()[10])
        XCTAssertFalse(fresh.mayContain(.base, ids.sorted()[10]), "kinds are apart")
        XCTAssertFalse(fresh.mayContain(.nodeId, ids.sorted()[11]))
        XCTAssertTrue(fresh.mayContain(.nodeId, ids.sorted()[9]), "below the highest: may be there (the database answers)")
    }

    /// A vault that holds only its root but a tombstone (a node pushed, then removed here, its
    /// delete still to replay) is not an empty vault for a listing: its entries are kept.
    func testAVaultWithATombstoneIsNotAFreshListing() throws {
        try vault.tombstonesTable.put(Tombstone(nodeId: String(repeating: "d", count: 32), remoteId: String(repeating: "d", count: 32), isFolder: true, version: 1))
        let store = vault.pullStore()
        XCTAssertFalse(try store.beginListing())
        XCTAssertEqual(foreignKeys, 1)
        try store.endListing(commit: false)
        try vault.tombstonesTable.delete(nodeId: String(repeating: "d", count: 32))
        XCTAssertTrue(try store.beginListing())
        try store.endListing(commit: false)
    }
}
