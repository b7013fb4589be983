import Foundation
import VaultBrowseModel
import VaultCore
import XCTest

/// The revisions of a file as the browser lists them: the columns of each row, the title
/// (offline: as last seen), the selection, and the layout at every width.
final class RevisionsViewTests: XCTestCase {
    static let utc = TimeZone(identifier: "UTC")!
    static let me = "0123456789abcdef0123456789abcdef"
    static let other = "fedcba9876543210fedcba9876543210"

    static func revision(_ id: String, time: Int64, size: Int64, device: String, head: Bool = false, local: Bool = false) -> RevisionInfo {
        RevisionInfo(id: id, time: time, size: size, sha256: String(repeating: "a", count: 64), device: device, isHead: head, content: nil, local: local)
    }

    static let list = [
        revision("aaaaaaaa11112222333344445555aaaa", time: 1_764_460_800, size: 2048, device: other, head: true),
        revision("bbbbbbbb11112222333344445555bbbb", time: 1_764_374_400, size: 5, device: me, local: true),
        revision("local-1", time: 1_764_288_000, size: 1_572_864, device: "local", local: true),
    ]

    static let file = BrowseEntry(id: "n1", name: "r.txt", isFolder: false, size: 2048, modifiedAt: 0, content: .local, pinned: false)

    func view(offline: Bool = false, height: Int = 10) -> RevisionsView {
        RevisionsView(file: Self.file, path: "/docs/r.txt", revisions: Self.list, offline: offline, thisDevice: Self.me, height: height)
    }

    func testRowsSayIdTimeSizeDeviceAndWhichIsCurrent() {
        let v = view()
        let head = v.row(Self.list[0], timeZone: Self.utc)
        XCTAssertEqual(head, RevisionsView.Row(mark: "*", id: "aaaaaaaa", time: "2025-11-30 00:00", size: "2.0 KiB", device: "device fedcba98", note: "current"))
        let mine = v.row(Self.list[1], timeZone: Self.utc)
        XCTAssertEqual(mine, RevisionsView.Row(mark: " ", id: "bbbbbbbb", time: "2025-11-29 00:00", size: "5 B", device: "this device", note: "here"))
        let kept = v.row(Self.list[2], timeZone: Self.utc)
        XCTAssertEqual(kept.device, "here, not uploaded")
        XCTAssertEqual(kept.size, "1.5 MiB")
        XCTAssertEqual(kept.id, "local-1")
        // The device label is the one `vault revisions` prints.
        XCTAssertEqual(Self.list[1].deviceLabel(thisDevice: Self.me), "this device")
        XCTAssertEqual(Self.list[0].deviceLabel(thisDevice: nil), "device fedcba98")
        // An id from the server is shown escaped.
        XCTAssertEqual(RevisionsView.shortId("ab\u{1b}[2Jcdefgh"), "ab\\x1b[2Jcd", "8 characters, then escaped")
    }

    func testTitleSaysLastSeenOfflineAndTheQuestionNamesTheRevision() {
        XCTAssertEqual(view().title, "revisions of /docs/r.txt: 3")
        XCTAssertEqual(view(offline: true).title, "revisions of /docs/r.txt: 3 (offline: as last seen)")
        let empty = RevisionsView(file: Self.file, path: "/x", revisions: [], offline: true, thisDevice: nil)
        XCTAssertNil(empty.selected)
        XCTAssertTrue(empty.emptyText.contains("cannot be reached"))
        XCTAssertTrue(RevisionsView(file: Self.file, path: "/x", revisions: [], offline: false, thisDevice: nil).emptyText.contains("never uploaded"))
        let q = view().restoreQuestion(Self.list[1])
        XCTAssertTrue(q.hasPrefix("Restore revision bbbbbbbb ("), q)
        XCTAssertTrue(q.hasSuffix(", 5 B) as current? (y/n)"), q)
        let big = Self.revision("x", time: 0, size: 1_048_575, device: "local")
        XCTAssertLessThan(view().restoreQuestion(big).count, 80, "fits the bottom line at 80 columns")
        XCTAssertTrue(view().title.contains("/docs/r.txt") && !RevisionsView(file: Self.file, path: "/a\nb", revisions: [], offline: false, thisDevice: nil).title.contains("\n"))
    }

    func testSelectionMovesScrollsAndFollowsARestore() {
        var v = view(height: 2)
        XCTAssertEqual(v.selected?.id, Self.list[0].id)
        v.move(by: 1)
        v.move(by: 1)
        XCTAssertEqual(v.selected?.id, "local-1")
        XCTAssertEqual(v.rows.map(\.index), [1, 2])
        v.move(by: 5)
        XCTAssertEqual(v.scroll.selection, 2)
        v.moveToFirst()
        XCTAssertEqual(v.rows.map(\.index), [0, 1])
        // After a restore of the second: a new head comes first; the selection stays on what was selected.
        v.move(by: 1)
        var after = Self.list.map { var r = $0; r.isHead = false; return r }
        after.insert(Self.revision("cccccccc11112222333344445555cccc", time: 1_764_547_200, size: 5, device: Self.me, head: true), at: 0)
        v.replace(after, offline: false)
        XCTAssertEqual(v.selected?.id, Self.list[1].id)
        XCTAssertEqual(v.revisions.count, 4)
        // A selected revision that is gone: the current one is selected.
        v.replace(Array(after.prefix(1)), offline: true)
        XCTAssertEqual(v.selected?.isHead, true)
        XCTAssertTrue(v.offline)
    }

    func testRowLayoutFitsEveryWidthAndShowsEverythingAt80() {
        let full = RevisionRowLayout(width: 80)
        XCTAssertEqual(full.size, .init(x: 30, width: 10))
        XCTAssertEqual(full.device, .init(x: 42, width: 20))
        XCTAssertEqual(full.note, .init(x: 64, width: 16))
        let narrow = RevisionRowLayout(width: 30)
        XCTAssertNil(narrow.size)
        XCTAssertNil(narrow.device)
        XCTAssertEqual(narrow.time.x + narrow.time.width, 28)
        for w in 30...200 {
            let l = RevisionRowLayout(width: w)
            let columns = [l.mark, l.id, l.time] + [l.size, l.device, l.note].compactMap { $0 }
            XCTAssertTrue(columns.allSatisfy { $0.x + $0.width <= w && $0.width >= 1 }, "width \(w)")
            for (a, b) in zip(columns, columns.dropFirst()) { XCTAssertLessThan(a.x + a.width, b.x + 1, "width \(w): overlap") }
        }
    }

    func testListScrollKeepsItsInvariants() {
        var s = ListScroll(count: 0, height: 3)
        s.move(by: 1)
        XCTAssertEqual(s.selection, 0)
        XCTAssertEqual(s.rows, 0..<0)
        var seed: UInt64 = 0x5eed
        for _ in 0..<2000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let r = Int(truncatingIfNeeded: seed >> 33)
            switch r % 5 {
            case 0: s.move(by: r % 7 - 3)
            case 1: s.page(r % 2 == 0 ? 1 : -1)
            case 2: s.height = r % 6
            case 3: s.reset(count: r % 20, selection: r % 25)
            default: r % 2 == 0 ? s.moveToFirst() : s.moveToLast()
            }
            XCTAssertTrue(s.count == 0 ? s.selection == 0 : (0..<s.count).contains(s.selection), "seed state \(seed)")
            XCTAssertTrue(s.count == 0 || s.rows.contains(s.selection), "the selection is on screen")
            XCTAssertTrue(s.top >= 0 && s.top <= max(0, s.count - s.height))
        }
    }
}
