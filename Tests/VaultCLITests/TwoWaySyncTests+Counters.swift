import Foundation
import XCTest

/// The maintained totals (issue 21 "Counters instead of scans"): after a mixed workload through
/// the real binary on two devices — `put -r`, `mv`, `rm`, `pin`, `evict`, syncs that make a
/// conflict, a restore, a key rotation, `conflicts --clear` — `vault doctor`'s recount finds no
/// counter to correct on either device, and `vault status` says what the tree and storage say.
extension TwoWaySyncTests {
    /// Device `h`'s counter corrections from `vault doctor --json` (none when the counters agree
    /// with a recount).
    func counterRepairs(_ h: CLIHarness, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let report = try XCTUnwrap(try h.ok(["doctor", "--json"] + h.pw, file: file, line: line).json as? [String: Any])
        return (report["repaired"] as? [String] ?? []).filter { $0.hasPrefix("counter ") }
    }

    func testCountersAgreeWithARecountAfterAMixedWorkloadOnTwoDevices() throws {
        let local = a.root.appendingPathComponent("tree-in")
        try FileManager.default.createDirectory(at: local.appendingPathComponent("sub"), withIntermediateDirectories: true)
        for i in 0..<6 { try Data("file \(i)".utf8).write(to: local.appendingPathComponent(i < 3 ? "f\(i).txt" : "sub/f\(i).txt")) }
        try a.ok(["put", "-r", local.path, "/t"] + a.pw)
        try put(a, "/r.txt", "first")
        try sync(a)
        try put(a, "/r.txt", "second", replace: true)
        try a.ok(["mv", "/t/f0.txt", "/t/sub/moved.txt"] + a.pw)
        try a.ok(["rm", "/t/f1.txt"] + a.pw)
        try a.ok(["pin", "/t/sub"] + a.pw)
        XCTAssertEqual(try counterRepairs(a), [], "before any sync: staged content and pending changes")
        try sync(a)
        try a.ok(["evict", "/t/f2.txt"] + a.pw)
        try sync(b)
        XCTAssertEqual(try cat(b, "/t/sub/moved.txt"), "file 0")
        try b.ok(["pin", "/t/sub/f3.txt", "--wait"] + b.pw)

        // Both edit one file: the second sync settles a conflict (a copy and a message).
        try put(a, "/r.txt", "edited on a", replace: true)
        try put(b, "/r.txt", "edited on b", replace: true)
        try sync(a)
        XCTAssertTrue(try sync(b).out.contains("1 conflict(s) settled"))
        try sync(a)
        XCTAssertEqual(try counterRepairs(a), [])
        XCTAssertEqual(try counterRepairs(b), [])

        // B's status reads the counters: they say what the tree, the conflicts and storage say.
        let status = try XCTUnwrap(try b.ok(["status", "--json"] + b.pw).json as? [String: Any])
        XCTAssertEqual(status["nodes"] as? Int, try tree(b).count + 1, "the root counts")
        XCTAssertEqual(status["conflicts"] as? Int, 1)
        XCTAssertEqual(status["pendingChanges"] as? Int, 0)
        let storage = try XCTUnwrap(status["storage"] as? [String: Any])
        XCTAssertGreaterThan(storage["pinnedBytes"] as? Int ?? 0, 0, "\(storage)")
        XCTAssertEqual(storage["stagedBytes"] as? Int, 0, "\(storage)")

        // A restore, B's unpin, a rotation and clearing the conflicts move them too.
        let list = try XCTUnwrap((try a.ok(["revisions", "/r.txt", "--json"] + a.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        let first = try XCTUnwrap(list.first { $0["sha256"] as? String == sha256Hex(Data("first".utf8)) }?["id"] as? String)
        try a.ok(["restore", "/r.txt", "--revision", first] + a.pw)
        try sync(b)
        try b.ok(["unpin", "/t/sub/f3.txt"] + b.pw)
        try b.ok(["conflicts", "--clear"] + b.pw)
        try a.ok(["key", "rotate"] + a.pw)
        try sync(a)
        try b.ok(["unlock"] + b.pw)   // adopts the new key: B's database is re-keyed too
        try sync(b)
        XCTAssertEqual(try counterRepairs(a), [])
        XCTAssertEqual(try counterRepairs(b), [])
        let after = try XCTUnwrap(try b.ok(["status", "--json"] + b.pw).json as? [String: Any])
        XCTAssertEqual(after["conflicts"] as? Int, 0)
        XCTAssertEqual(after["nodes"] as? Int, try tree(b).count + 1)
    }
}
