import Foundation
import VaultBrowseModel
import VaultCore
import XCTest

/// The key map, the line editor, the status bar texts and the column layout.
final class KeysAndTextTests: XCTestCase {
    func testArrowsAndViKeysAndOneLetterActions() {
        let expected: [(BrowseKey, BrowseAction)] = [
            (.up, .moveUp), (.character("k"), .moveUp), (.down, .moveDown), (.character("j"), .moveDown),
            (.enter, .open), (.right, .open), (.character("l"), .open),
            (.left, .goUp), (.character("h"), .goUp), (.backspace, .goUp),
            (.pageDown, .pageDown), (.character(" "), .pageDown), (.pageUp, .pageUp),
            (.home, .first), (.character("g"), .first), (.end, .last), (.character("G"), .last),
            (.character("p"), .togglePin), (.character("e"), .evict), (.character("d"), .delete), (.delete, .delete),
            (.character("r"), .rename), (.character("/"), .filter), (.character("s"), .cycleSort),
            (.character("?"), .help), (.character("q"), .quit), (.control("l"), .redraw),
            (.escape, .clearFilter), (.character("x"), .none), (.control("c"), .none),
            (.character("v"), .revisions), (.character("R"), .none),
        ]
        for (key, action) in expected { XCTAssertEqual(KeyMap.action(for: key), action, "\(key)") }
    }

    func testRevisionsKeysMoveShowRestoreAndGoBackAndNothingElse() {
        let expected: [(BrowseKey, BrowseAction)] = [
            (.up, .moveUp), (.character("k"), .moveUp), (.down, .moveDown), (.character("j"), .moveDown),
            (.character("g"), .first), (.character("G"), .last), (.pageDown, .pageDown), (.pageUp, .pageUp),
            (.enter, .open), (.right, .open), (.character("l"), .open), (.character("R"), .restore),
            (.escape, .goUp), (.left, .goUp), (.character("h"), .goUp), (.backspace, .goUp), (.character("q"), .goUp),
            (.control("l"), .redraw),
            // The folder's actions do nothing here: no pin, evict, delete, rename or quit by accident.
            (.character("p"), .none), (.character("e"), .none), (.character("d"), .none), (.delete, .none),
            (.character("r"), .none), (.character("/"), .none), (.character("s"), .none), (.character("v"), .none),
            (.character("?"), .none),
        ]
        for (key, action) in expected { XCTAssertEqual(KeyMap.revisionsAction(for: key), action, "\(key)") }
    }

    func testLineEditorEditsAcceptsAndCancels() {
        var e = LineEditor("report.pdf")
        XCTAssertEqual(e.cursor, 10)
        for _ in 0..<3 { _ = e.handle(.backspace) }
        for c in "txt" { _ = e.handle(.character(c)) }
        XCTAssertEqual(e.text, "report.txt")
        _ = e.handle(.home)
        _ = e.handle(.delete)
        _ = e.handle(.character("R"))
        XCTAssertEqual(e.text, "Report.txt")
        _ = e.handle(.left); _ = e.handle(.backspace)   // at the start: nothing to remove
        XCTAssertEqual(e.text, "Report.txt")
        _ = e.handle(.end); _ = e.handle(.right); _ = e.handle(.delete)   // at the end: nothing
        XCTAssertEqual(e.handle(.enter), .accepted("Report.txt"))
        _ = e.handle(.control("u"))
        XCTAssertEqual(e.text, "")
        XCTAssertEqual(e.handle(.escape), .cancelled)
    }

    func testLineEditorWindowKeepsTheCursorVisibleAndEscapes() {
        let e = LineEditor(String(repeating: "x", count: 30))
        let w = e.window(width: 10, cells: { $0.count })
        XCTAssertEqual(w.cursorColumn, 9)
        XCTAssertEqual(w.text, String(repeating: "x", count: 9))
        var left = e
        _ = left.handle(.home)
        XCTAssertEqual(left.window(width: 10, cells: { $0.count }).cursorColumn, 0)
        let pasted = LineEditor("a\u{1b}b")
        XCTAssertEqual(pasted.window(width: 20, cells: { $0.count }).text, "a\\x1bb", "a pasted escape is shown, not sent")
        XCTAssertEqual(pasted.window(width: 20, cells: { $0.count }).cursorColumn, 6)
    }

    func testStorageAndTransferTexts() {
        let r = try! JSONDecoder().decode(StorageReport.self, from: Data(#"{"pinnedBytes": 1048576, "cachedBytes": 3145728, "stagedBytes": 0, "freeBytes": 10737418240}"#.utf8))
        XCTAssertEqual(StatusText.storage(r), "pinned 1.0 MiB  cached 3.0 MiB  staged 0 B  free 10.0 GiB  budget none")
        XCTAssertEqual(StatusText.transfers([]), "no transfers")
        let list = [TransferSummary(upload: true, running: true, failed: false, bytesDone: 50, bytesTotal: 100),
                    TransferSummary(upload: true, running: true, failed: false, bytesDone: 0, bytesTotal: 100),
                    TransferSummary(upload: false, running: true, failed: false, bytesDone: 9, bytesTotal: 10),
                    TransferSummary(upload: true, running: false, failed: false, bytesDone: 0, bytesTotal: 10),
                    TransferSummary(upload: false, running: false, failed: true, bytesDone: 0, bytesTotal: 10)]
        XCTAssertEqual(StatusText.transfers(list), "up 2 25%  down 1 90%  1 waiting  1 failed")
    }

    func testSessionTextAndCountdown() {
        let now: Int64 = 1000
        typealias D = VaultReopener.Deadlines
        XCTAssertEqual(StatusText.session(D(idle: now + 872, absolute: now + 20000), heldHere: false, now: now),
                       "unlocked, locks in 14m 32s (idle)")
        XCTAssertEqual(StatusText.session(D(idle: now + 900, absolute: now + 30), heldHere: false, now: now),
                       "unlocked, locks in 30s (limit)")
        XCTAssertEqual(StatusText.session(D(idle: nil, absolute: nil), heldHere: false, now: now), "unlocked, no auto-lock")
        XCTAssertEqual(StatusText.session(D(idle: now + 7500, absolute: nil), heldHere: true, now: now),
                       "unlocked (key held by this browser), locks in 2h 05m (idle)")
        XCTAssertEqual(StatusText.countdown(-5), "0s")
        XCTAssertEqual(StatusText.countdown(59), "59s")
        XCTAssertEqual(StatusText.countdown(60), "1m 00s")
        XCTAssertEqual(StatusText.countdown(3600), "1h 00m")
        XCTAssertEqual(StatusText.date(1_700_000_000, timeZone: TimeZone(identifier: "UTC")!), "2023-11-14 22:13")
    }

    func testColumnsFitTheWidthAndNarrowScreensDropTheDateThenTheSize() {
        let full = RowLayout(width: 80)
        XCTAssertEqual(full.marks, .init(x: 0, width: 7))
        XCTAssertEqual(full.name, .init(x: 8, width: 42))
        XCTAssertEqual(full.size, .init(x: 52, width: 10))
        XCTAssertEqual(full.date, .init(x: 64, width: 16))
        let mid = RowLayout(width: 50)
        XCTAssertNil(mid.date)
        XCTAssertEqual(mid.size, .init(x: 40, width: 10))
        XCTAssertEqual(mid.name.x + mid.name.width + 2, 40)
        let narrow = RowLayout(width: 30)
        XCTAssertNil(narrow.size)
        XCTAssertEqual(narrow.name, .init(x: 8, width: 22))
        for w in 1...200 {
            let l = RowLayout(width: w)
            XCTAssertGreaterThanOrEqual(l.name.width, 1)
            if w >= 30 { XCTAssertLessThanOrEqual(l.name.x + l.name.width, l.size?.x ?? l.date?.x ?? w, "width \(w)") }
            if let d = l.date { XCTAssertEqual(d.x + d.width, w) }
        }
    }

    func testHelpListsEveryKeyAndMark() {
        let text = BrowseHelp.lines.joined(separator: "\n")
        for k in ["Enter", "p", "e", "d", "r", "/", "s", "q", "$PAGER", "revisions", "R restores"] { XCTAssertTrue(text.contains(k), k) }
        for m in ["not downloaded", "pinned", "awaiting upload", "uploading", "conflict", "older version", "conflict copy"] {
            XCTAssertTrue(text.contains(m), m)
        }
        XCTAssertFalse(text.contains("comes with two-way sync"), "revisions are here")
        XCTAssertLessThanOrEqual(BrowseHelp.lines.count, 24, "the help fits an 80×24 terminal")
        XCTAssertTrue(BrowseHelp.lines.allSatisfy { $0.count < 80 })
        for hint in [BrowseHelp.hint, BrowseHelp.revisionsHint] { XCTAssertLessThan(hint.count, 80, hint) }
        XCTAssertTrue(BrowseHelp.hint.contains("v:revisions"))
        XCTAssertTrue(BrowseHelp.revisionsHint.contains("R:restore"))
    }

    func testConflictCountText() {
        XCTAssertNil(StatusText.conflicts(0))
        XCTAssertEqual(StatusText.conflicts(1), "conflicts: 1")
        XCTAssertEqual(StatusText.conflicts(12), "conflicts: 12")
    }
}
