import VaultBrowseModel
import VaultCore
import VaultTerminal
import XCTest

/// Names and text on the terminal: names escaped as every command escapes them, and cell widths.
final class ScreenTextTests: XCTestCase {
    override func setUp() {
        XCTAssertTrue(Terminal.adoptUTF8Locale(), "the tests need a UTF-8 locale (C.UTF-8)")
    }

    func testNamesAreShownEscapedAsEveryCommandShowsThem() {
        // Every C0 control, DEL and every C1 control: none reaches the screen, each has a visible form.
        for v in Array(0..<0x20) + Array(0x7f..<0xa0) {
            let entry = BrowseEntry(id: "x", name: "a" + String(Unicode.Scalar(UInt32(v))!) + "b", isFolder: false, size: 0,
                                    modifiedAt: 0, content: .local, pinned: false)
            XCTAssertFalse(entry.displayName.unicodeScalars.contains { $0.value < 0x20 || (0x7f..<0xa0).contains($0.value) },
                           "U+\(String(v, radix: 16)) reached the screen raw: \(entry.displayName.debugDescription)")
            XCTAssertEqual(entry.displayName, DisplayText.escaped(entry.name), "one escaping for every command")
        }
        let evil = BrowseEntry(id: "x", name: "bad\u{1b}[31mname", isFolder: true, size: 0, modifiedAt: 0, content: nil, pinned: false)
        XCTAssertEqual(evil.displayName, "bad\\x1b[31mname/")
        for name in ["report.pdf", "Ünïcödé", "日本語のファイル", "e\u{301}", "spaces  inside "] {
            XCTAssertEqual(BrowseEntry(id: "x", name: name, isFolder: false, size: 0, modifiedAt: 0, content: .local, pinned: false).displayName, name)
        }
    }

    func testCellWidthsFollowTheTerminal() {
        XCTAssertEqual(CellText.width("abc"), 3)
        XCTAssertEqual(CellText.width("日本"), 4)
        XCTAssertEqual(CellText.width("e\u{301}"), 1, "a combining accent takes no cell")
        XCTAssertEqual(CellText.width("🎉"), 2)
        XCTAssertEqual(CellText.width("a\u{1b}b"), 3, "a control is drawn as U+FFFD, one cell")
    }

    func testFitClipsPadsAndNeverSplitsAWideCharacter() {
        XCTAssertEqual(CellText.fit("abc", width: 5), "abc  ")
        XCTAssertEqual(CellText.fit("abc", width: 5, align: .right), "  abc")
        XCTAssertEqual(CellText.fit("abcdef", width: 4), "abc…")
        XCTAssertEqual(CellText.fit("abcdef", width: 4, ellipsis: false), "abcd")
        XCTAssertEqual(CellText.fit("日本語", width: 5), "日本…")
        XCTAssertEqual(CellText.fit("日本語", width: 4, ellipsis: false), "日本")
        XCTAssertEqual(CellText.fit("日本語", width: 3, ellipsis: false), "日 ", "the second wide character would straddle the edge")
        XCTAssertEqual(CellText.fit("a\u{1b}[31m", width: 10), "a\u{FFFD}[31m    ")
        XCTAssertEqual(CellText.fit("x\u{202e}y\u{2028}z", width: 5), "x\u{FFFD}y\u{FFFD}z", "no reordering or line break from other text")
        XCTAssertEqual(CellText.fit("anything", width: 0), "")
        // Every fitted string takes exactly the width asked, whatever it holds.
        for text in ["", "a", "日本語のファイル", "e\u{301}e\u{301}e\u{301}", "🎉x🎉", "\u{1b}\u{7}x"] {
            for w in 1...12 {
                XCTAssertEqual(CellText.width(CellText.fit(text, width: w)), w, "\(text.debugDescription) in \(w)")
                XCTAssertEqual(CellText.width(CellText.fit(text, width: w, ellipsis: false)), w, "\(text.debugDescription) in \(w)")
            }
        }
    }
}
