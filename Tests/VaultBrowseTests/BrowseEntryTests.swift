import Foundation
import VaultBrowseModel
import VaultCore
import XCTest

/// The state column and the entry built from a node, its folder totals, outbox and transfer.
final class BrowseEntryTests: XCTestCase {
    static func node(_ name: String, folder: Bool = false, state: ContentState = .local, pinned: Bool = false,
                     pending: String? = nil, size: UInt64 = 100) -> Node {
        // Node's memberwise initialiser is VaultCore's own; its Codable form is public.
        var json: [String: Any] = ["id": "id-" + name, "remoteId": "r-" + name, "parentId": "root", "name": name,
                                   "type": folder ? "folder" : "file", "size": size, "version": 1, "modifiedAt": 1_700_000_000,
                                   "contentState": state.rawValue, "pinned": pinned, "localVersion": 1]
        if let pending { json["pendingOp"] = pending }
        return try! JSONDecoder().decode(Node.self, from: JSONSerialization.data(withJSONObject: json))
    }

    func testMarksForEachContentState() {
        XCTAssertEqual(BrowseEntry(node: Self.node("a")).marks, "L      ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .notDownloaded)).marks, "-      ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .stale)).marks, "S      ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .downloading)).marks, "v    0%")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pinned: true)).marks, "LP     ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .notDownloaded, pinned: true)).marks, "-P     ")
        for n in [Self.node("a"), Self.node("b", folder: true)] {
            XCTAssertEqual(BrowseEntry(node: n).marks.count, 7)
        }
    }

    func testSyncMarksAndTheirPrecedence() {
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pending: "upload")).marks, "L ^    ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), outbox: .pending).activity, .awaitingUpload)
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pending: "upload"), outbox: .paused).marks, "L =    ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pending: "upload"), transfer: (true, true, 45, 100)).marks, "L ^ 45%")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pending: "upload"), transfer: (true, false, 45, 100)).marks, "L ^    ",
                       "an interrupted upload waits; no percentage")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .notDownloaded, pinned: true), transfer: (false, true, 1, 8)).marks, "vP  12%")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pending: "upload"), outbox: .conflict, transfer: (true, true, 45, 100)).marks,
                       "L !    ", "a conflict outranks everything")
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), transfer: (true, true, 100, 100)).marks, "L ^100%")
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), transfer: (true, true, 5, 0)).activity, .uploading(percent: 0), "no size: no division")
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), transfer: (true, true, 500, 100)).activity, .uploading(percent: 100))
    }

    func testOlderVersionAndConflictMarks() {
        // STALE: this device holds an older version than the server's head.
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .stale)).marks, "S      ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .stale, pinned: true)).marks, "SP     ")
        // An open conflict (`vault conflicts` names it): `!`, beside the content state.
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), conflicted: true).marks, "L !    ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", state: .stale), conflicted: true).marks, "S !    ")
        XCTAssertEqual(BrowseEntry(node: Self.node("a", pending: "upload"), conflicted: true).marks, "L !    ", "outranks awaiting upload")
        XCTAssertEqual(BrowseEntry(node: Self.node("d", folder: true), conflicted: true).marks, "  !    ", "a folder: something inside")
        // A running transfer still shows its progress; a refused change outranks everything.
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), transfer: (true, true, 45, 100), conflicted: true).marks, "L ^ 45%")
        XCTAssertEqual(BrowseEntry(node: Self.node("a"), outbox: .conflict, conflicted: false).marks, "L !    ")
        // A conflict copy, by its name (also on a device that did not settle the conflict).
        for name in ["report (conflict from laptop-b 2026-11-30).pdf", "notes (conflict from desk 2026-11-30 2).txt",
                     ".bashrc (conflict from d 2024-05-01 2)", "Makefile (conflict from my.box 2024-05-01)",
                     "a (conflict from  2024-05-01).txt"] {
            XCTAssertEqual(BrowseEntry(node: Self.node(name)).activity, .conflict, name)
            XCTAssertEqual(BrowseEntry(node: Self.node(name, state: .notDownloaded)).marks, "- !    ", name)
        }
        for name in ["report.pdf", "report (conflict).pdf", "report (conflict from laptop).pdf", "x (conflict from d 2024-5-01).txt",
                     "x (conflict from d 2024-05-01).tar.gz", "x (conflict from d 2024-05-01) y.txt", "(conflict from d 2024-05-01", ""] {
            XCTAssertEqual(BrowseEntry(node: Self.node(name)).activity, BrowseEntry.Activity.none, name)
        }
        // Every name `ConflictName.make` gives is recognised.
        for (name, device, n) in [("report.pdf", "desk/top", 1), (".bashrc", "d", 2), (String(repeating: "é", count: 127) + ".txt", "d", 1),
                                  ("a.b.c", "host (x)", 3), ("noext", "", 1)] {
            let copy = ConflictName.make(name, device: device, date: "2024-05-01", number: n)
            XCTAssertTrue(ConflictName.isCopy(copy), copy)
        }
    }

    func testFoldersShowTheirSummedSizeAndWhatIsInside() {
        let totals = FolderTotals(bytes: 12_345, files: 3, awaitingUpload: 0)
        let f = BrowseEntry(node: Self.node("docs", folder: true, size: 0), totals: totals)
        XCTAssertEqual(f.size, 12_345)
        XCTAssertNil(f.content)
        XCTAssertEqual(f.marks, "       ")
        XCTAssertEqual(f.displayName, "docs/")
        XCTAssertEqual(f.sizeText, "12.1 KiB")
        let busy = BrowseEntry(node: Self.node("docs", folder: true, pinned: true), totals: FolderTotals(bytes: 1, files: 1, awaitingUpload: 2))
        XCTAssertEqual(busy.marks, " P^    ")
        XCTAssertEqual(BrowseEntry(node: Self.node("empty", folder: true)).size, 0)
    }

    func testDisplayNameIsEscaped() {
        XCTAssertEqual(BrowseEntry(node: Self.node("x\u{1b}[2Jy")).displayName, "x\\x1b[2Jy")
        XCTAssertEqual(BrowseEntry(node: Self.node("x\ny", folder: true)).displayName, "x\\ny/")
    }
}
