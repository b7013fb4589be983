import Foundation
import XCTest

/// A node record's sequence number only grows (SECURITY.md "Node record"), also across a node
/// leaving this device's tree and coming back: a move replayed for a folder removed since, and a
/// folder a delete-vs-edit brought back. The other device would otherwise take the honest
/// server's record for a rollback and refuse every later sync.
extension TwoWaySyncTests {
    /// A move kept in the outbox for a folder removed with `rm -r` replays from its tombstone.
    func testAMoveReplayedForAFolderRemovedSinceSealsAHigherSequenceNumber() throws {
        try a.ok(["mkdir", "/A"] + a.pw)
        try sync(a)
        try a.ok(["mv", "/A", "/B"] + a.pw)
        try sync(a)
        try sync(b)
        try a.ok(["mv", "/B", "/C"] + a.pw)
        try a.ok(["rm", "-r", "/C"] + a.pw)
        try sync(a)
        let pulled = try b.run(["sync"] + b.pw)
        XCTAssertEqual(pulled.status, 0, pulled.stderr)
        XCTAssertFalse(pulled.stderr.contains("rolled back"), pulled.stderr)
        XCTAssertEqual(try tree(a), try tree(b))
        try sync(b)
    }

    /// A folder (and its subtree) that a delete-vs-edit brings back keeps its sequence numbers.
    func testAFolderBroughtBackByADeleteVersusEditSealsAHigherSequenceNumber() throws {
        try a.ok(["mkdir", "/C"] + a.pw)
        try sync(a)
        try a.ok(["mv", "/C", "/D"] + a.pw)
        try sync(a)
        try sync(b)
        try put(b, "/D/x.txt", "from b")
        try sync(b)
        try a.ok(["rm", "-r", "/D"] + a.pw)
        try sync(a)                                   // the edit wins: /D comes back
        XCTAssertNotNil(try node(a, "/D/x.txt"))
        try a.ok(["mv", "/D", "/E"] + a.pw)
        try sync(a)
        let pulled = try b.run(["sync"] + b.pw)
        XCTAssertEqual(pulled.status, 0, pulled.stderr)
        XCTAssertFalse(pulled.stderr.contains("rolled back"), pulled.stderr)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertNotNil(try node(b, "/E/x.txt"))
    }
}
