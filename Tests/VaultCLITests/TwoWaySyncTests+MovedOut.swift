import Foundation
import XCTest

/// docs/sync.md, "delete of a folder": a folder another device moved out of one deleted here is
/// deleted where it went, unless something below it changed there; then it comes back with its
/// subtree, and the folder it left stays deleted (seed 12226 of the simulation).
extension TwoWaySyncTests {
    func testAFolderCreatedBelowOneMovedOutOfAFolderDeletedHereBringsTheMovedFolderBack() throws {
        for p in ["/D", "/D/F", "/D/F/G"] { try a.ok(["mkdir", p] + a.pw) }
        try put(a, "/D/keep.txt", "old")
        try sync(a)
        try sync(b)
        // A removes /D (not synced yet); B moves /D/F out, then creates a folder below it.
        try a.ok(["rm", "-r", "/D"] + a.pw)
        try b.ok(["mv", "/D/F", "/F"] + b.pw)
        try sync(b)
        try b.ok(["mkdir", "/F/G/new"] + b.pw)
        try sync(b)

        let out = try sync(a)
        XCTAssertTrue((out.out + out.stderr).contains("the change wins, and it is back"), out.out + out.stderr)
        let expected = ["/F": "folder", "/F/G": "folder", "/F/G/new": "folder"]
        XCTAssertEqual(try tree(a), expected, "/F comes back with what it holds; /D stays deleted")
        try sync(b)
        XCTAssertEqual(try tree(b), expected)
    }
}
