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
