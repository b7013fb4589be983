import XCTest
@testable import VaultCore
@testable import VaultKeys

/// The check a listing's commit makes (`nodesOffTree`): nodes whose parent is missing or a file,
/// folders inside themselves (directly or through others) and what is below them are counted; a
/// sound tree counts none. The one-pass check and its recursive-query fallback agree.
final class TreeCheckTests: VaultTestCase {
    private func node(_ id: String, in parent: String?, folder: Bool) throws {
        try vault.db.run("INSERT INTO nodes(id, parent_id, name, folder, modified_at) VALUES (?, ?, ?, ?, 0)",
                         [id, parent, id, folder])
    }

    private func off() throws -> (pass: Int, query: Int) {
        (try vault.nodesOffTree(), try vault.nodesOffTree(folderLimit: 0))
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try vault.db.execute("PRAGMA foreign_keys = OFF")     // to build broken trees
        try node("a", in: "root", folder: true)
        try node("b", in: "a", folder: true)
        try node("c", in: "b", folder: false)
        try node("d", in: "root", folder: false)
        try node("e", in: "a", folder: true)                  // empty folder
    }

    func testASoundTreeHasNoneOff() throws {
        let r = try off()
        XCTAssertEqual(r.pass, 0); XCTAssertEqual(r.query, 0)
    }

    func testAMissingParentAndAFileAsParentAreOff() throws {
        try node("f", in: "nowhere", folder: false)
        try node("g", in: "d", folder: false)                 // d is a file
        try node("h", in: "nowhere", folder: true)
        try node("i", in: "h", folder: false)                 // below an orphan folder
        let r = try off()
        XCTAssertEqual(r.pass, 4); XCTAssertEqual(r.query, 4)
    }

    func testFoldersInsideThemselvesAndWhatTheyHoldAreOff() throws {
        try node("j", in: "k", folder: true)
        try node("k", in: "j", folder: true)                  // j and k inside each other
        try node("l", in: "j", folder: false)
        try node("m", in: "m", folder: true)                  // inside itself
        try node("n", in: "m", folder: true)
        let r = try off()
        XCTAssertEqual(r.pass, 5); XCTAssertEqual(r.query, 5)
    }

    func testALongChainLeadsUp() throws {
        var parent = "root"
        for i in 0..<2_000 { try node("p\(i)", in: parent, folder: true); parent = "p\(i)" }
        try node("leaf", in: parent, folder: false)
        let r = try off()
        XCTAssertEqual(r.pass, 0); XCTAssertEqual(r.query, 0)
    }
}
