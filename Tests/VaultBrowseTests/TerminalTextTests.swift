import VaultBrowseModel
import VaultTerminal
import XCTest

/// Names and text on the terminal: escaping of everything that could act on it, and cell widths.
final class TerminalTextTests: XCTestCase {
    override func setUp() {
        XCTAssertTrue(Terminal.adoptUTF8Locale(), "the tests need a UTF-8 locale (C.UTF-8)")
    }

    func testEveryControlCharacterIsEscapedNeverRaw() {
        // Every C0 control, DEL and every C1 control: none survives, each has a visible form.
        for v in Array(0..<0x20) + Array(0x7f..<0xa0) {
            let name = "a" + String(Unicode.Scalar(UInt32(v))!) + "b"
            let shown = TerminalText.escaped(name)
            XCTAssertFalse(shown.unicodeScalars.contains { $0.value < 0x20 || (0x7f..<0xa0).contains($0.value) },
                           "U+\(String(v, radix: 16)) reached the screen raw: \(shown.debugDescription)")
            XCTAssertTrue(shown.hasPrefix("a\\") && shown.hasSuffix("b"), shown)
        }
        XCTAssertEqual(TerminalText.escaped("bad\u{1b}[31mname"), "bad\\e[31mname")
        XCTAssertEqual(TerminalText.escaped("a\nb\tc\rd"), "a\\nb\\tc\\rd")
        XCTAssertEqual(TerminalText.escaped("\u{7}\u{7f}\u{9b}"), "\\x07\\x7F\\x9B")
        // A title-setting sequence (OSC ... BEL) is inert once escaped.
        XCTAssertEqual(TerminalText.escaped("\u{1b}]0;pwned\u{7}"), "\\e]0;pwned\\x07")
    }

    func testReorderingAndLineBreakingCharactersAreEscaped() {
        for v: UInt32 in [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029] {
            let shown = TerminalText.escaped("x" + String(Unicode.Scalar(v)!) + "y")
            XCTAssertEqual(shown, "x\\u{" + String(v, radix: 16, uppercase: true).leftPadded(4) + "}y")
        }
        // "invoice‮fdp.exe" must not display as "invoiceexe.pdf".
        XCTAssertEqual(TerminalText.escaped("invoice\u{202e}fdp.exe"), "invoice\\u{202E}fdp.exe")
    }

    func testOrdinaryNamesAreUnchangedAndBackslashIsUnambiguous() {
        for name in ["report.pdf", "Ünïcödé", "日本語のファイル", "emoji 🎉👨‍👩‍👧", "e\u{301}", "spaces  inside ", "tab-less"] {
            XCTAssertEqual(TerminalText.escaped(name), name)
        }
        XCTAssertEqual(TerminalText.escaped("a\\eb"), "a\\\\eb", "a literal backslash is doubled, so it never reads as an escape")
        XCTAssertNotEqual(TerminalText.escaped("a\\eb"), TerminalText.escaped("a\u{1b}b"))
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

extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}
