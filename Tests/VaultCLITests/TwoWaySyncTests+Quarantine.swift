import Foundation
import XCTest

/// A node no device of the vault wrote (made through the API by a script, a bug or the server:
/// no sealed record) is refused and quarantined, and everything else still syncs: `vault sync`
/// applies the rest, lists the refusal (`--json`: `pull.refused`) and exits 6; `vault status`
/// lists it; later syncs are not wedged (issue 18, item 4).
extension TwoWaySyncTests {
    /// A plaintext node made through the API as the account's user (no name token, no record).
    func foreignNode(in parent: String = "root", file: StaticString = #filePath, line: UInt = #line) throws -> (id: String, version: Int) {
        let made = try send("POST", "/v1/files", #"{"name": "made-by-a-script", "parentId": "\#(parent)", "type": "folder"}"#)
        XCTAssertEqual(made.status, 201, String(decoding: made.body, as: UTF8.self), file: file, line: line)
        let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: made.body) as? [String: Any], file: file, line: line)
        return (try XCTUnwrap(body["id"] as? String, file: file, line: line), (body["version"] as? NSNumber)?.intValue ?? 1)
    }

    /// `vault sync --json` on `h`: exit 6, everything else applied; the refused ids it reports.
    func syncRefusing(_ h: CLIHarness, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let r = try h.run(["sync", "--json"] + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr, file: file, line: line)
        let pull = try XCTUnwrap((r.json as? [String: Any])?["pull"] as? [String: Any], "one JSON document, the report: \(r.out)",
                                 file: file, line: line)
        let refused = pull["refused"] as? [[String: Any]] ?? []
        XCTAssertTrue(refused.allSatisfy { ($0["reason"] as? String)?.contains("not end-to-end encrypted") == true }, "\(refused)",
                      file: file, line: line)
        return refused.compactMap { $0["id"] as? String }
    }

    /// The ids `vault status --json` lists as refused, and that its text names them.
    func statusRefused(_ h: CLIHarness, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let text = try h.ok(["status"] + h.pw).out
        let refused = try XCTUnwrap((try h.ok(["status", "--json"] + h.pw).json as? [String: Any])?["refused"] as? [[String: Any]],
                                    file: file, line: line)
        let ids = refused.compactMap { $0["id"] as? String }
        for id in ids { XCTAssertTrue(text.contains(id) && text.contains("not end-to-end encrypted"), text, file: file, line: line) }
        return ids
    }

    func testATrashedForeignNodeInTheFeedIsRefusedAndTheRestStillSyncs() throws {
        try a.ok(["mkdir", "/F"] + a.pw)
        try put(a, "/F/x.txt", "x")
        try sync(a)
        try sync(b)
        // In the window B has not pulled: A makes changes before and after a script makes a node
        // through the API and trashes it (A refuses it too, and sends its change).
        try put(a, "/F/y.txt", "y")
        try sync(a)
        let foreign = try foreignNode()
        XCTAssertEqual(try send("DELETE", "/v1/files/\(foreign.id)", "", ifMatch: foreign.version).status, 200)
        try a.ok(["mkdir", "/G"] + a.pw)
        XCTAssertEqual(try syncRefusing(a), [foreign.id])

        XCTAssertEqual(try syncRefusing(b), [foreign.id])
        XCTAssertEqual(try tree(b), try tree(a), "A's changes of the same window applied")
        XCTAssertEqual(try cat(b, "/F/y.txt"), "y")
        XCTAssertEqual(try statusRefused(b), [foreign.id])

        // Not wedged: A's later change arrives; the quarantine stays (exit 6) until cleared.
        try put(a, "/later.txt", "later")
        XCTAssertEqual(try syncRefusing(a), [foreign.id])
        let again = try b.run(["sync"] + b.pw)
        XCTAssertEqual(again.status, 6, again.stderr)
        XCTAssertTrue(again.stderr.contains("everything else was synced") && again.stderr.contains("vault status"), again.stderr)
        XCTAssertEqual(try cat(b, "/later.txt"), "later")
        XCTAssertEqual(try tree(b), try tree(a))
    }

    func testALiveForeignNodeInTheListingIsRefusedAndANewDeviceGetsTheRest() throws {
        try a.ok(["mkdir", "/F"] + a.pw)
        try put(a, "/F/x.txt", "x")
        try sync(a)
        let foreign = try foreignNode()
        // A new device's first sync reads the full listing.
        let c = try device("desktop-c")
        XCTAssertEqual(try syncRefusing(c), [foreign.id])
        XCTAssertEqual(try tree(c), try tree(a))
        XCTAssertEqual(try cat(c, "/F/x.txt"), "x")
        XCTAssertEqual(try statusRefused(c), [foreign.id])
        // The other devices refuse it from the feed and keep syncing.
        XCTAssertEqual(try syncRefusing(a), [foreign.id])
        try put(a, "/F/z.txt", "z")
        XCTAssertEqual(try syncRefusing(a), [foreign.id])
        XCTAssertEqual(try syncRefusing(c), [foreign.id])
        XCTAssertEqual(try cat(c, "/F/z.txt"), "z")
    }
}
