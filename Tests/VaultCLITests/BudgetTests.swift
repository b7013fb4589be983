import Foundation
import XCTest
import VaultTestSupport

/// The content budget applies whenever content arrives in the cache (issue 9, item 11: it used
/// to apply only in `vault evict`): uploads moved to the cache by `vault sync`, downloads by
/// `cat`, `get` and `pin` — the real binary against a real `vault-server`.
final class BudgetTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    let kib = 1024

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        server = try ServerHarness(root: h.root)
        h.useFastRetry()
        try h.login(to: server)
    }

    override func tearDown() {
        server = nil
        h = nil
    }

    /// Puts random files of `sizes` bytes at their paths and syncs them; returns their contents.
    func putAndSync(_ sizes: [String: Int]) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for (path, size) in sizes.sorted(by: { $0.key < $1.key }) {
            let data = TestData.data(size, for: self.name)
            try h.ok(["put", try h.localFile(String(path.dropFirst()), data), path] + h.pw)
            out[path] = data
        }
        try h.ok(["sync"] + h.pw)
        return out
    }

    /// Path → content state of every file at the root.
    func states() throws -> [String: String] {
        let all = try XCTUnwrap(try h.ok(["ls", "/", "--json"] + h.pw).json as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: all.map { ($0["path"] as! String, $0["contentState"] as! String) })
    }

    /// Cached bytes (pinned and not), as `vault storage` counts them against the budget.
    func cachedBytes() throws -> Int {
        let s = try XCTUnwrap(try h.ok(["storage", "--json"] + h.pw).json as? [String: Any])
        return (s["pinnedBytes"] as! Int) + (s["cachedBytes"] as! Int)
    }

    func occurrences(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    func testUploadsAndDownloadsAreFittedToTheBudget() throws {
        let budget = 2500 * kib
        try h.ok(["storage", "--budget", "\(budget)"] + h.pw)
        let files = try putAndSync(["/a.bin": 1024 * kib, "/b.bin": 1024 * kib, "/c.bin": 1024 * kib])
        // The sync moved 3 MiB of uploaded content to the cache: one file had to go.
        var s = try states()
        XCTAssertEqual(s.values.filter { $0 == "NOT_DOWNLOADED" }.count, 1, "\(s)")
        XCTAssertLessThanOrEqual(try cachedBytes(), budget)
        // Reading the evicted file downloads it; another file goes, never the one being read.
        for _ in 0..<3 {
            let evicted = try XCTUnwrap(s.first { $0.value == "NOT_DOWNLOADED" }?.key)
            let cat = try h.ok(["cat", evicted] + h.pw)
            XCTAssertEqual(cat.stdout, files[evicted])
            XCTAssertFalse(cat.stderr.contains("exceeds the content budget"), cat.stderr)
            s = try states()
            XCTAssertEqual(s[evicted], "LOCAL")
            XCTAssertEqual(s.values.filter { $0 == "NOT_DOWNLOADED" }.count, 1, "\(s)")
            XCTAssertLessThanOrEqual(try cachedBytes(), budget)
        }
        // `get` too.
        let evicted = try XCTUnwrap(s.first { $0.value == "NOT_DOWNLOADED" }?.key)
        let target = h.root.appendingPathComponent("got.bin")
        try h.ok(["get", evicted, target.path] + h.pw)
        XCTAssertEqual(try Data(contentsOf: target), files[evicted])
        XCTAssertEqual(try states()[evicted], "LOCAL")
        XCTAssertLessThanOrEqual(try cachedBytes(), budget)
    }

    func testAFileLargerThanTheBudgetIsKeptWithOneWarning() throws {
        let files = try putAndSync(["/big.bin": 1536 * kib, "/small.bin": 200 * kib])
        try h.ok(["storage", "--budget", "1M"] + h.pw)
        try h.ok(["evict"] + h.pw)
        for (path, state) in try states() where state == "LOCAL" { try h.ok(["evict", path] + h.pw) }
        XCTAssertEqual(try h.ok(["cat", "/small.bin"] + h.pw).stdout, files["/small.bin"])
        let cat = try h.ok(["cat", "/big.bin"] + h.pw)
        XCTAssertEqual(cat.stdout, files["/big.bin"], "the content is kept and read")
        XCTAssertEqual(occurrences("exceeds the content budget", in: cat.stderr), 1, cat.stderr)
        XCTAssertTrue(cat.stderr.contains("/big.bin") && cat.stderr.contains("vault storage --budget"), cat.stderr)
        XCTAssertEqual(try states(), ["/big.bin": "LOCAL", "/small.bin": "NOT_DOWNLOADED"], "everything else made room")
    }

    func testPinnedContentOverTheBudgetIsKeptWithOneWarning() throws {
        let files = try putAndSync(["/p1.bin": 700 * kib, "/p2.bin": 700 * kib, "/p3.bin": 700 * kib])
        try h.ok(["storage", "--budget", "1M"] + h.pw)
        for (path, state) in try states() where state == "LOCAL" { try h.ok(["evict", path] + h.pw) }
        let pin = try h.ok(["pin", "/", "--wait"] + h.pw, env: ["VAULT_BACKGROUND_DOWNLOADS": "0"])
        XCTAssertTrue(pin.out.contains("Downloaded 3 file(s)"), pin.out)
        XCTAssertEqual(occurrences("exceeds the content budget", in: pin.stderr), 1, "two downloads over budget, one warning: \(pin.stderr)")
        XCTAssertTrue(pin.stderr.contains("pinned content alone") && pin.stderr.contains("vault unpin"), pin.stderr)
        XCTAssertEqual(Set(try states().values), ["LOCAL"], "pinned content is never evicted")
        for (path, data) in files { XCTAssertEqual(try h.ok(["cat", path] + h.pw).stdout, data) }
    }
}
