import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys

/// Budget, LRU eviction, pinning and staged content (BRIEF §3 Storage).
final class StorageTests: VaultTestCase {
    func testEvictionFollowsLastAccessAndSkipsPinnedAndStaged() throws {
        try vault.mkdir("/c")
        let a = try cachedFile("/c/a", size: 100_000)
        let b = try cachedFile("/c/b", size: 100_000)
        let c = try cachedFile("/c/c", size: 100_000)
        try vault.setPinned("/c/c", true)
        _ = try vault.put(localFile: try file("staged", size: 100_000), to: "/staged")
        // Touch a after b: b is the least recently used.
        try vault.db.run("UPDATE nodes SET last_accessed = 100 WHERE id = ?", [CompactColumns.key(b.id)])
        try vault.db.run("UPDATE nodes SET last_accessed = 200 WHERE id = ?", [CompactColumns.key(a.id)])
        var r = try vault.storageReport()
        XCTAssertGreaterThan(r.stagedBytes, 100_000)
        XCTAssertGreaterThan(r.pinnedBytes, 100_000)
        XCTAssertGreaterThan(r.cachedBytes, 200_000)
        // Budget fits pinned + one cached file.
        try vault.setContentBudget(r.pinnedBytes + r.cachedBytes / 2 + 10)
        let ev = try vault.enforceBudget()
        XCTAssertEqual(ev.evicted, ["/c/b"])
        XCTAssertEqual(try vault.node(id: b.id)?.contentState, .notDownloaded)
        XCTAssertNil(try vault.node(id: b.id)?.localPath)
        XCTAssertNotNil(try vault.node(id: b.id), "eviction never removes the node")
        XCTAssertEqual(try vault.node(id: a.id)?.contentState, .local)
        XCTAssertEqual(try vault.node(id: c.id)?.contentState, .local)
        XCTAssertThrowsError(try vault.openContent(try vault.node(id: b.id)!)) {
            XCTAssertEqual(($0 as? VaultError)?.kind, .notLocal)
        }
        // Pinned alone over budget: said, never deleted.
        try vault.setContentBudget(10)
        let ev2 = try vault.enforceBudget()
        XCTAssertEqual(ev2.evicted, ["/c/a"])
        XCTAssertNotNil(ev2.message)
        XCTAssertTrue(ev2.message!.contains("pinned"), ev2.message!)
        r = try vault.storageReport()
        XCTAssertNotNil(r.warning)
        XCTAssertEqual(try vault.node(id: c.id)?.contentState, .local)
        XCTAssertGreaterThan(r.stagedBytes, 100_000, "staged content is never evicted")
    }

    func testExplicitEvictRefusesPinnedAndUnsynced() throws {
        try cachedFile("/x", size: 10)
        _ = try vault.put(localFile: try file("y", size: 10), to: "/y")
        try cachedFile("/p", size: 10)
        try vault.setPinned("/p", true)
        XCTAssertEqual(try vault.evict(paths: ["/x"]).evicted, ["/x"])
        XCTAssertThrowsError(try vault.evict(paths: ["/y"])) { XCTAssertEqual(($0 as? VaultError)?.kind, .conflict) }
        XCTAssertThrowsError(try vault.evict(paths: ["/p"])) { XCTAssertEqual(($0 as? VaultError)?.kind, .conflict) }
    }

    func testDoctorReconcilesWithDisk() throws {
        let n = try cachedFile("/gone", size: 1000)
        let keep = try cachedFile("/keep", size: 1000)
        // A cached blob vanishes, a temp file is left from a killed write, and a stray blob appears.
        unlink(layout.root + "/cache/\(n.localPath!).blob")
        FileManager.default.createFile(atPath: layout.root + "/tmp/deadbeef.partial", contents: Data([1, 2, 3]))
        FileManager.default.createFile(atPath: layout.root + "/cache/0123456789abcdef0123456789abcdef.blob", contents: Data([1]))
        try vault.db.run("UPDATE nodes SET content_state = 0 WHERE id=?", [CompactColumns.key(keep.id)])
        let r = try vault.doctor(verify: true)
        XCTAssertTrue(r.healthy, "\(r.problems)")
        XCTAssertEqual(r.repaired.count, 4, "\(r.repaired)")
        XCTAssertEqual(try vault.node(id: n.id)?.contentState, .notDownloaded)
        XCTAssertEqual(try vault.node(id: keep.id)?.contentState, .local)
        XCTAssertEqual(try vault.doctor().repaired, [], "a second run finds nothing")
    }

    /// `doctor` reads the files a page at a time (its memory does not grow with the vault):
    /// damage on any page is repaired, and the blobs of every page count as referenced.
    func testDoctorChecksEveryPageOfFiles() throws {
        let files = try (1...7).map { try cachedFile("/f\($0)", size: 100 + $0) }
        let gone = [files[0], files[3], files[6]]   // on the first, second and last page of two
        for n in gone { unlink(layout.root + "/cache/\(n.localPath!).blob") }
        let r = try vault.doctor(verify: true, pageSize: 2)
        XCTAssertTrue(r.healthy, "\(r.problems)")
        XCTAssertEqual(r.nodesChecked, 7)
        XCTAssertEqual(r.repaired.filter { $0.contains("marked NOT_DOWNLOADED") }.count, 3, "\(r.repaired)")
        XCTAssertEqual(r.repaired.filter { $0.contains("unreferenced") }, [], "a blob of another page was taken for a stray")
        for n in files {
            XCTAssertEqual(try vault.node(id: n.id)?.contentState, gone.contains { $0.id == n.id } ? .notDownloaded : .local)
        }
        XCTAssertEqual(try vault.doctor(verify: true, pageSize: 2).repaired, [], "a second run finds nothing")
    }

    // MARK: The budget policy (pure) and its use when content arrives

    func testBudgetPlanEvictsLeastRecentlyUsedFirstAndNeverPinnedKeptOrUnevictable() {
        typealias Item = CacheBudget.Item
        let items = [Item(nodeId: "a", bytes: 100, lastUsed: 30, pinned: false),
                     Item(nodeId: "b", bytes: 100, lastUsed: 10, pinned: false),
                     Item(nodeId: "c", bytes: 100, lastUsed: 20, pinned: false),
                     Item(nodeId: "p", bytes: 100, lastUsed: 5, pinned: true),
                     Item(nodeId: "k", bytes: 100, lastUsed: 1, pinned: false),
                     Item(nodeId: "rev", bytes: 100, lastUsed: 0, pinned: false, evictable: false)]
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 600, keep: ["k"]), .init(evict: [], usedAfter: 600, shortfall: nil))
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 450, keep: ["k"]), .init(evict: ["b", "c"], usedAfter: 400, shortfall: nil))
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 350, keep: ["k"]), .init(evict: ["b", "c", "a"], usedAfter: 300, shortfall: nil))
        // Without a kept node, the least recently used goes first, whatever it is.
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 450).evict, ["k", "b"])
        // What cannot be evicted: pinned alone over budget, the kept file, or revisions.
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 50, keep: ["k"]).shortfall, .pinnedAlone(pinnedBytes: 100))
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 150, keep: ["k"]).shortfall, .kept(keptBytes: 100))
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 250, keep: ["k"]).shortfall, .unevictable)
        XCTAssertEqual(CacheBudget.plan(items: items, budget: 150, keep: ["k"]).evict, ["b", "c", "a"], "everything permitted still goes")
        // Equal access times: the node id decides, so the plan is deterministic.
        let tied = ["z", "y", "x"].map { Item(nodeId: $0, bytes: 10, lastUsed: 7, pinned: false) }
        XCTAssertEqual(CacheBudget.plan(items: tied, budget: 15).evict, ["x", "y"])
    }

    func testContentArrivingInTheCacheIsFittedToTheBudgetAndAWarningIsGivenOnce() throws {
        let a = try cachedFile("/a", size: 100_000)
        let b = try cachedFile("/b", size: 100_000)
        try vault.db.run("UPDATE nodes SET last_accessed = 100 WHERE id = ?", [CompactColumns.key(a.id)])
        try vault.db.run("UPDATE nodes SET last_accessed = 200 WHERE id = ?", [CompactColumns.key(b.id)])
        let one = try vault.storageReport().cachedBytes / 2
        try vault.setContentBudget(2 * one + one / 2)
        // c arrives (as a download or an upload would put it): a, the least recently used, goes.
        let c = try cachedFile("/c", size: 100_000)
        var r = try vault.applyBudget(keeping: [c.id], now: 300)
        XCTAssertEqual(r.evicted, ["/a"])
        XCTAssertNil(r.message)
        XCTAssertEqual(try vault.node(id: c.id)?.lastAccessed, 300, "what arrived counts as just used")
        XCTAssertLessThanOrEqual(try vault.storageReport().cachedBytes, 2 * one + one / 2)
        // A budget smaller than c: everything else goes, c stays, and the warning comes once.
        try vault.setContentBudget(10)
        r = try vault.applyBudget(keeping: [c.id], now: 400)
        XCTAssertEqual(r.evicted, ["/b"])
        let warning = try XCTUnwrap(r.message)
        XCTAssertTrue(warning.contains("/c") && warning.contains("kept") && warning.contains("vault storage --budget"), warning)
        r = try vault.applyBudget(keeping: [c.id], now: 500)
        XCTAssertEqual(r.evicted, [])
        XCTAssertNil(r.message, "warned once per command")
        XCTAssertEqual(try vault.node(id: c.id)?.contentState, .local)
        // Once c is no longer in use it goes too; staged content is never touched.
        _ = try vault.put(localFile: try file("s", size: 100_000), to: "/s")
        XCTAssertEqual(try vault.applyBudget().evicted, ["/c"])
        XCTAssertEqual(try vault.resolve("/s").contentState, .local)
    }
}
