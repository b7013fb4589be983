import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `vault browse` end to end, in a real terminal (tmux) against a real vault and keyring:
/// navigation, marks, actions, the pager, resizing, locking underneath, other commands beside
/// it, and the terminal given back sane however it ends.
final class BrowseTests: XCTestCase {
    static let hello = "hello from inside the vault"

    /// An unlocked vault: /docs/a.txt, /docs/sub/numbers.txt, /top.txt and a file whose name
    /// holds an escape sequence.
    func vault(unlock: Bool = true) throws -> CLIHarness {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service (run scripts/test.sh)")
        let h = try CLIHarness()
        try h.initVault()
        if unlock { try h.ok(["unlock"] + h.pw) }
        try h.ok(["mkdir", "-p", "/docs/sub"] + h.pw)
        try h.ok(["put", try h.localFile("a.txt", Data((Self.hello + "\n").utf8)), "/docs/a.txt"] + h.pw)
        let numbers = (1...3000).map(String.init).joined(separator: "\n") + "\n"
        try h.ok(["put", try h.localFile("numbers.txt", Data(numbers.utf8)), "/docs/sub/numbers.txt"] + h.pw)
        try h.ok(["put", try h.localFile("top.txt", Data((Self.hello + "\n").utf8)), "/top.txt"] + h.pw)
        try h.ok(["put", try h.localFile("evil", Data("x".utf8)), "/bad\u{1b}[31mname\u{7}"] + h.pw)
        return h
    }

    func testRefusesWithoutATerminalAndWhenLockedWithoutAPasswordSource() throws {
        let h = try vault(unlock: false)
        var r = try h.run(["browse"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("needs a terminal"), r.stderr)
        r = try h.run(["browse", "--json"])
        XCTAssertEqual(r.status, 2)
        // Locked, no password source: exit 3 before the screen is taken, like any command.
        let locked = try TmuxPane(h)
        try locked.waitFor("BROWSE-EXIT=3")
        XCTAssertTrue(try locked.screen().contains("the vault is locked"))
        locked.assertTerminalSane(try locked.exitStatusAndTerminalSettings().stty)
        // No such path: exit 4.
        try h.ok(["unlock"] + h.pw)
        let missing = try TmuxPane(h, args: ["/no/such/folder"])
        try missing.waitFor("BROWSE-EXIT=4")
    }

    func testNavigatesShowsStatesAndSizesAndEscapesNames() throws {
        let h = try vault()
        let t = try TmuxPane(h)
        // The whole first screen, not the first row drawn: a capture can land between two rows.
        var s = try t.waitFor("the first screen") {
            $0.contains("docs/") && $0.contains("top.txt") && $0.contains("bad\\x1b[31mname") && $0.contains("unlocked, locks in")
        }
        XCTAssertTrue(s.hasPrefix(" vault  /"), s)
        // Folders first with their summed size; the escape sequence shown, not obeyed.
        let lines = s.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[1].contains("docs/"), s)
        XCTAssertTrue(lines[1].contains("11.5 KiB") || lines[1].contains("KiB"), s)
        XCTAssertTrue(s.contains("bad\\x1b[31mname\\x07"), "the name is escaped: \(s)")
        try t.waitFor("top.txt shown local, awaiting upload") { screen in
            screen.split(separator: "\n").first { $0.contains("top.txt") }?.hasPrefix("L ^") == true
        }
        XCTAssertTrue(s.contains("staged"), s)
        XCTAssertTrue(s.contains("unlocked, locks in"), s)
        XCTAssertFalse(try t.screen(escapes: true).contains("\u{1b}[31mname"), "the name's own escape never reaches the terminal")
        // Into docs (Enter), into sub (l), back (h, Left): the folder we came from stays selected.
        try t.press("Enter")
        s = try t.waitFor(" vault  /docs ")
        XCTAssertTrue(s.contains("sub/") && s.contains("a.txt"), s)
        try t.press("l")
        s = try t.waitFor(" vault  /docs/sub ")
        XCTAssertTrue(s.contains("numbers.txt"), s)
        try t.press("h")
        try t.waitFor(" vault  /docs ")
        try t.press("Left")
        s = try t.waitFor(" vault  / ")
        XCTAssertTrue(s.contains("1/3"), "docs/ is selected again: \(s)")
        // Down with j and the arrow, up with k; sort; filter; help.
        try t.press("j", "Down")
        try t.waitFor("3/3")
        try t.press("k")
        try t.waitFor("2/3")
        try t.press("s")
        try t.waitFor("sort: size")
        try t.press("/")
        try t.type("TOP")
        s = try t.waitFor("filter: TOP")
        XCTAssertTrue(s.contains("top.txt") && !s.contains("docs/"), s)
        try t.press("Enter")
        try t.press("Escape")
        try t.waitFor("docs/")
        try t.press("?")
        try t.waitFor("vault browse: keys")
        try t.press("x")
        try t.waitFor("docs/")
        try t.press("q")
        let (status, stty) = try t.exitStatusAndTerminalSettings()
        XCTAssertEqual(status, 0)
        t.assertTerminalSane(stty)
        // A file as PATH: its folder, with it selected.
        let file = try TmuxPane(h, args: ["/docs/a.txt"])
        let f = try file.waitFor(" vault  /docs ")
        XCTAssertTrue(f.contains("2/2"), f)
    }

    func testPinRenameDeleteAndEvictAgreeWithTheCommandLine() throws {
        let h = try vault()
        let t = try TmuxPane(h)
        try t.waitFor("top.txt")
        try t.press("G")   // the last entry: top.txt
        try t.waitFor("3/3")
        try t.press("p")
        try t.waitFor("Pinned /top.txt")
        try t.waitFor("pinned row") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("LP^") == true }
        // Other commands run while the browser is open, and see what it did.
        XCTAssertEqual(try h.node("/top.txt")["pinned"] as? Bool, true)
        try t.press("p")
        try t.waitFor("Unpinned /top.txt")
        XCTAssertEqual(try h.node("/top.txt")["pinned"] as? Bool, false)
        // Evicting content that was never uploaded is refused, with the reason.
        try t.press("e")
        try t.waitFor("has not been uploaded yet")
        // Rename with the line editor.
        try t.press("r")
        try t.waitFor("Rename top.txt to:")
        try t.press("C-u")
        try t.type("renamed.txt")
        try t.press("Enter")
        try t.waitFor("Renamed to renamed.txt")
        XCTAssertNotNil(try? h.node("/renamed.txt"))
        // A name that exists is refused (a rename never moves into a folder).
        try t.press("r", "C-u")
        try t.type("docs")
        try t.press("Enter")
        try t.waitFor("already exists")
        XCTAssertNotNil(try? h.node("/renamed.txt"))
        // Delete asks first; n keeps it, y deletes it.
        try t.press("d")
        try t.waitFor("(y/n)")
        try t.press("n")
        try t.waitFor("Nothing deleted.")
        try t.press("d")
        try t.waitFor("cannot be undone")
        try t.press("y")
        try t.waitFor("Deleted /renamed.txt")
        XCTAssertFalse(try h.ok(["ls", "/"]).out.contains("renamed.txt"))
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testShowsAFileInThePagerThroughAPipeAndComesBack() throws {
        let h = try vault()
        let t = try TmuxPane(h, env: ["PAGER": "less"])
        try t.waitFor("top.txt")
        try t.press("G", "Enter")
        try t.waitFor(Self.hello)
        try t.waitFor("(END)")
        // The plaintext reaches the pager through a pipe: nothing written anywhere.
        let less = try XCTUnwrap(TmuxPane.descendant(of: try t.browsePid(), named: "less"))
        let stdin = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(less)/fd/0")
        XCTAssertTrue(stdin.hasPrefix("pipe:"), "the pager reads \(stdin)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.tmp.path), [], "no temporary file")
        try t.press("q")
        let s = try t.waitFor(" vault  / ")
        XCTAssertTrue(s.contains("docs/"), s)
        // A longer file: quitting the pager before its end is normal.
        try t.press("g", "Enter", "Enter")
        try t.waitFor("numbers.txt")
        try t.press("Enter")
        try t.waitFor("\n2\n3\n")
        try t.press("q")
        let back = try t.waitFor(" vault  /docs/sub ")
        XCTAssertFalse(back.contains("exited with status"), back)
        try t.press("q")
        let (status, stty) = try t.exitStatusAndTerminalSettings()
        XCTAssertEqual(status, 0)
        t.assertTerminalSane(stty)
    }

    /// Issue 18, item 3: a copy of a blob taken before `vault key rotate` and put back is never
    /// shown: the browser says why, and nothing reaches the pager.
    func testThePagerRefusesACopyOfABlobFromBeforeAKeyRotation() throws {
        let h = try vault()
        let old = try (h.blobFiles("staging") + h.blobFiles("cache")).map { ($0, try Data(contentsOf: $0)) }
        try h.ok(["key", "rotate"] + h.pw)
        for (url, bytes) in old { try bytes.write(to: url) }
        let shown = h.root.appendingPathComponent("shown-by-pager").path
        let t = try TmuxPane(h, env: ["PAGER": "tee '\(shown)'"], columns: 240)
        try t.waitFor("top.txt")
        try t.press("G", "Enter")
        try t.waitFor("key epoch 1")
        XCTAssertFalse(FileManager.default.fileExists(atPath: shown), "nothing reached the pager")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testEvictThenOpenDownloadsFirstAndPinDownloadsInTheBackground() throws {
        let h = try vault()
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        try h.login(to: server)
        try h.ok(["sync"] + h.pw)
        let t = try TmuxPane(h, env: ["PAGER": "less"])
        try t.waitFor("uploaded and local") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("L      ") == true }
        try t.press("G", "e")
        try t.waitFor("Evicted 1 file(s)")
        try t.waitFor("not downloaded") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("-      ") == true }
        XCTAssertEqual(try h.node("/top.txt")["contentState"] as? String, "NOT_DOWNLOADED")
        // Enter on content that is not here: it downloads (saying so), then shows.
        try server.faults(#"{"delayMs": 1500}"#)
        try t.press("Enter")
        try t.waitFor("Downloading top.txt")
        try t.waitFor("(END)")
        try server.faults("{}")
        XCTAssertTrue(try t.screen().contains(Self.hello))
        try t.press("q")
        try t.waitFor("local again") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("L      ") == true }
        // Pinning content that is not here downloads it in the background, as `vault pin` does.
        try t.press("e")
        try t.waitFor("not downloaded") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("-      ") == true }
        try t.press("p")
        try t.waitFor("in the background")
        try t.waitFor("pinned and local") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("LP     ") == true }
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    /// `v` on a file: its two revisions; Enter shows the old one in the pager (downloaded first,
    /// through the sealed API); `R` asks, then restores it (a third revision, the new head);
    /// offline, the list last seen; Esc goes back.
    func testRevisionsOfAFileShowTheOldOneInThePagerAndRestoreIt() throws {
        let h = try vault()
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        try h.login(to: server)
        try h.ok(["put", try h.localFile("r1", Data("the first version\n".utf8)), "/r.txt"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["put", try h.localFile("r2", Data("the second version\n".utf8)), "/r.txt", "--replace"] + h.pw)
        try h.ok(["sync"] + h.pw)
        let t = try TmuxPane(h, args: ["/r.txt"], env: ["PAGER": "less"])
        try t.waitFor("r.txt")
        try t.press("v")
        var s = try t.waitFor("revisions of /r.txt: 2")
        XCTAssertFalse(s.contains("last seen"), s)
        XCTAssertTrue(s.contains("R:restore"), s)
        let rows = s.split(separator: "\n").map(String.init)
        let head = try XCTUnwrap(rows.firstIndex { $0.contains("current") }, s)
        XCTAssertTrue(rows[head].hasPrefix("* "), "the head is marked: \(s)")
        XCTAssertTrue(rows[head].contains("this device") && rows[head].contains("B"), "device and size: \(s)")
        XCTAssertEqual(rows.filter { $0.contains("this device") }.count, 2, s)
        // The old one: Enter shows it in the pager, downloaded first (it was never here as a revision).
        try t.press(head == 1 ? "G" : "g", "Enter")
        try t.waitFor("the first version")
        try t.waitFor("(END)")
        try t.press("q")
        try t.waitFor("the old one marked as here") { s in
            s.contains("revisions of /r.txt: 2") && s.split(separator: "\n").contains { !$0.contains("current") && $0.contains("here") }
        }
        try t.waitFor("transfers: no transfers")   // the revision's download is finished, not left waiting
        XCTAssertEqual(try h.transfers().filter { $0["state"] as? String != "done" }.count, 0)
        XCTAssertEqual(String(decoding: try h.ok(["cat", "/r.txt"] + h.pw).stdout, as: UTF8.self), "the second version\n",
                       "reading an old version leaves the current one")
        // R asks first; n keeps everything.
        try t.press("R")
        try t.waitFor("as current? (y/n)")
        try t.press("n")
        try t.waitFor("Nothing restored.")
        try t.press("R")
        try t.waitFor("(y/n)")
        try t.press("y")
        try t.waitFor("Restored revision")
        s = try t.waitFor("revisions of /r.txt: 3")
        XCTAssertEqual(String(decoding: try h.ok(["cat", "/r.txt"] + h.pw).stdout, as: UTF8.self), "the first version\n",
                       "the restored version is the current one")
        let list = try XCTUnwrap((try h.ok(["revisions", "/r.txt", "--json"] + h.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        XCTAssertEqual(list.count, 3, "nothing overwritten: the restore is a new revision")
        let newHead = try XCTUnwrap(list.first { $0["isHead"] as? Bool == true }?["id"] as? String)
        XCTAssertTrue(try t.row(containing: "current")?.contains(String(newHead.prefix(8))) == true, "the list shows the new head: \(s)")
        // The current version (first: the newest) is not restored over itself.
        try t.press("g")
        try t.waitFor("1/3")
        try t.press("R")
        try t.waitFor("That is the current version already.")
        // Esc: back to the folder.
        try t.press("Escape")
        try t.waitFor(" vault  / ")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)

        // The server out of reach: the list last seen, said so; showing a revision not here says why not.
        let off = try TmuxPane(h, args: ["/r.txt"], env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_SERVER_URL": "http://127.0.0.1:9",
                                                           "VAULT_RETRY_MAX": "1", "PAGER": "less"])
        try off.waitFor("r.txt")
        try off.press("v")
        s = try off.waitFor("(offline: as last seen)")
        XCTAssertTrue(s.contains("revisions of /r.txt: 3") && s.contains("last seen"), s)
        // The new head's content was never downloaded as a revision: the error is on the message
        // line, the view stays.
        try off.press("g", "Enter")
        s = try off.waitFor("the server kept failing (cannot connect")
        XCTAssertTrue(s.contains("revisions of /r.txt: 3"), s)
        try off.press("Escape")
        try off.waitFor(" vault  / ")
        try off.press("q")
        XCTAssertEqual(try off.exitStatusAndTerminalSettings().status, 0)
    }

    /// Another device changes a file: here it shows as an older version (`S`) after a sync. Both
    /// change one: the conflict copy and its folder show `!`, the bar counts the conflict, and
    /// the other device (which did not settle it) marks the copy by its name.
    func testAnotherDevicesChangeShowsAsAnOlderVersionAndAConflictAsAConflict() throws {
        let h = try vault()
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        try h.login(to: server)
        try h.ok(["sync"] + h.pw)
        let b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        try b.ok(["config", "set", "device-name", "laptop-b"] + b.pw)
        try b.ok(["sync"] + b.pw)
        try b.ok(["put", try b.localFile("t", Data("changed on b\n".utf8)), "/top.txt", "--replace"] + b.pw)
        try b.ok(["put", try b.localFile("a", Data("a, changed on b\n".utf8)), "/docs/a.txt", "--replace"] + b.pw)
        try b.ok(["sync"] + b.pw)
        // Here, /docs/a.txt changes too before this device hears of B's change: both kept.
        try h.ok(["put", try h.localFile("a2", Data("a, changed here\n".utf8)), "/docs/a.txt", "--replace"] + h.pw)
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try h.node("/top.txt")["contentState"] as? String, "STALE")
        let t = try TmuxPane(h, env: ["PAGER": "less"])
        try t.waitFor("older version") { _ in (try? t.row(containing: "top.txt"))?.hasPrefix("S      ") == true }
        var s = try t.waitFor("conflicts: 1  |  transfers")
        XCTAssertTrue(try t.row(containing: "docs/")?.hasPrefix("  !") == true, "the folder holding the conflict: \(s)")
        try t.press("?")
        try t.waitFor("older version: the server has a newer one")
        try t.press("x")
        try t.press("g", "Enter")
        s = try t.waitFor(" vault  /docs ")
        let copy = try XCTUnwrap(try t.row(containing: "(conflict from "), s)
        XCTAssertTrue(copy.hasPrefix("L !"), "the conflict copy: \(s)")
        XCTAssertFalse(try t.row(containing: "a.txt ")?.contains("!") == true, s)
        // Opening the older version shows it, and says a newer one is on the server.
        try t.press("h")
        try t.waitFor(" vault  / ")
        try t.press("G", "Enter")
        try t.waitFor(Self.hello)
        try t.waitFor("(END)")
        try t.press("q")
        try t.waitFor("is an older version: the server has a newer one")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
        // Cleared, the conflict goes from the bar and the folder; the copy keeps its mark (its name).
        try h.ok(["conflicts", "--clear"] + h.pw)
        let after = try TmuxPane(h, args: ["/docs"])
        try after.waitFor("(conflict from ")
        XCTAssertTrue(try after.row(containing: "(conflict from ")?.hasPrefix("L !") == true)
        try after.press("h")
        s = try after.waitFor(" vault  / ")
        XCTAssertFalse(s.contains("conflicts:"), s)
        XCTAssertFalse(try after.row(containing: "docs/")?.hasPrefix("  !") == true, s)
        // B did not settle the conflict: it marks the copy by its name.
        try b.ok(["sync"] + b.pw)
        let other = try TmuxPane(b, args: ["/docs"] + b.pw)
        try other.waitFor("the copy marked") { _ in (try? other.row(containing: "(conflict from "))?.dropFirst().hasPrefix(" !") == true }
    }

    func testShowsAnUploadLiveBesideARunningSync() throws {
        let h = try vault()
        let server = try ServerHarness(root: h.root, args: ["--max-chunk", "1048576"])
        h.useFastRetry()
        try h.login(to: server)
        try h.ok(["sync"] + h.pw)
        var bytes = [UInt8](repeating: 0, count: 16 << 20)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 13) }
        try h.ok(["put", try h.localFile("big.bin", Data(bytes)), "/big.bin"] + h.pw)
        let t = try TmuxPane(h)
        try t.waitFor("big.bin")
        try server.faults(#"{"delayMs": 300}"#)   // 1 MiB chunks, 0.3 s each: a few seconds of upload
        let sync = Process()
        sync.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        sync.arguments = ["sync"] + h.pw
        sync.environment = h.env
        sync.standardOutput = FileHandle.nullDevice
        sync.standardError = FileHandle.nullDevice
        try sync.run()
        // The browser reads beside the sync (the vault is not free) and shows the progress.
        try t.waitFor("the file uploading with a percentage") { _ in
            guard let row = try? t.row(containing: "big.bin") else { return false }
            return row.hasPrefix("L ^") && row.prefix(7).hasSuffix("%")
        }
        try t.waitFor("transfers: up 1")
        sync.waitUntilExit()
        XCTAssertEqual(sync.terminationStatus, 0)
        try server.faults("{}")
        try t.waitFor("uploaded") { _ in (try? t.row(containing: "big.bin"))?.hasPrefix("L      ") == true }
        try t.waitFor("transfers: no transfers")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testWhereThePolicyForbidsExportTheFileIsShownInLessSecureModeWhateverPagerSays() throws {
        let h = try vault()
        let cfg = h.home.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: cfg, withIntermediateDirectories: true)
        try Data(#"{"plaintextExport": false}"#.utf8).write(to: cfg.appendingPathComponent("settings.json"))
        let leak = h.root.appendingPathComponent("leaked-by-pager").path
        let t = try TmuxPane(h, env: ["PAGER": "tee '\(leak)'"])
        try t.waitFor("top.txt")
        try t.press("G", "Enter")
        try t.waitFor("(END)")
        let less = try XCTUnwrap(TmuxPane.descendant(of: try t.browsePid(), named: "less"), "less, not $PAGER")
        let environ = try String(contentsOfFile: "/proc/\(less)/environ", encoding: .utf8).split(separator: "\0")
        XCTAssertTrue(environ.contains("LESSSECURE=1"), "less cannot save, pipe or run a shell")
        try t.press("q")
        try t.waitFor("less's secure mode")
        XCTAssertFalse(FileManager.default.fileExists(atPath: leak), "$PAGER was not used")
    }

    func testWithoutAKeyringTheBrowserHoldsTheKeyItself() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        try h.ok(["put", try h.localFile("top.txt", Data((Self.hello + "\n").utf8)), "/top.txt"] + h.pw)
        let t = try TmuxPane(h, args: h.pw)
        try t.waitFor("key held by this browser")
        try t.press("p")   // actions open the vault with the held key: no password asked again
        try t.waitFor("Pinned /top.txt")
        XCTAssertEqual(try h.node("/top.txt")["pinned"] as? Bool, true)
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testResizesCleanly() throws {
        let h = try vault()
        let t = try TmuxPane(h)
        try t.waitFor("top.txt")
        XCTAssertTrue(try t.row(containing: "top.txt")?.contains("20") == true, "80 columns show the date")
        try t.resize(columns: 50, rows: 15)
        let s = try t.waitFor("a redraw at 50×15") { s in
            let lines = s.split(separator: "\n", omittingEmptySubsequences: false)
            return lines.count >= 15 && lines[12].hasPrefix(" pinned") && lines[0].hasPrefix(" vault  /")
        }
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertFalse(lines[1...3].contains { $0.contains("20") && $0.contains(":") }, "no date column at 50: \(s)")
        XCTAssertTrue(lines.allSatisfy { $0.count <= 50 }, s)
        try t.resize(columns: 100, rows: 30)
        try t.waitFor("a redraw at 100×30") { s in
            let lines = s.split(separator: "\n", omittingEmptySubsequences: false)
            return lines.count >= 30 && lines[27].hasPrefix(" pinned")
        }
        try t.resize(columns: 20, rows: 5)
        try t.waitFor("Terminal too small")
        try t.resize(columns: 80, rows: 24)
        try t.waitFor("top.txt")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testLockingUnderneathClearsTheScreenAndUnlockingResumes() throws {
        let h = try vault()
        let t = try TmuxPane(h)
        try t.waitFor("top.txt")
        try h.ok(["lock"])
        let s = try t.waitFor("The vault is locked.")
        XCTAssertFalse(s.contains("top.txt") || s.contains("docs"), "nothing of the vault stays on screen: \(s)")
        try h.ok(["unlock"] + h.pw)
        try t.waitFor("top.txt")
        try h.ok(["lock"])
        try t.waitFor("Press q to quit")
        try t.press("q")
        let (status, stty) = try t.exitStatusAndTerminalSettings()
        XCTAssertEqual(status, 0)
        t.assertTerminalSane(stty)
    }

    func testAutoLockCountsDownAndLocksWhileNobodyTypesButKeysKeepItOpen() throws {
        let h = try vault(unlock: false)
        // With a 4 s idle timeout the session's idle clock is refreshed on use every second, so a
        // browser whose own refreshes counted as use would keep the vault open for ever.
        try h.ok(["unlock", "--idle", "4s"] + h.pw)
        let typing = try TmuxPane(h)
        try typing.waitFor("locks in")
        // Keys are use: pressed for longer than the idle timeout, the vault stays open.
        let until = Date().addingTimeInterval(7)
        var down = true
        while Date() < until {
            try typing.press(down ? "j" : "k")
            down.toggle()
            usleep(400_000)   // a typist's pace: the time passing while keys are pressed is the point, no event to wait for
        }
        let open = try typing.screen()
        XCTAssertFalse(open.contains("The vault is locked."), open)
        // Nobody types: the browser's refreshes are not use, and the session ends on time.
        try typing.waitFor("The vault is locked.")
        let s = try typing.waitFor("the reason, kept") { $0.contains("idle timeout") }
        usleep(2_500_000)   // two more checks find it locked: the reason stays (the browser's checks show nothing new, no event to wait for)
        XCTAssertTrue(try typing.screen().contains("idle timeout"), s)
        XCTAssertEqual(try h.run(["ls"]).status, 3, "locked for every command")
    }

    func testTheBarCountsDownToTheSessionsDeadline() throws {
        let h = try vault(unlock: false)
        let t0 = 1_900_000_000
        try h.ok(["unlock", "--idle", "2h", "--absolute", "1h"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0)"])
        // 75 s later by the vault's clock: the absolute limit comes first.
        let t = try TmuxPane(h, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": "\(t0 + 75)"])
        try t.waitFor("unlocked, locks in 58m 45s (limit)")
    }

    func testOtherCommandsRunBesideItAndBusyIsShownNotFatal() throws {
        let h = try vault()
        let t = try TmuxPane(h)
        try t.waitFor("top.txt")
        // An exclusive command succeeds while the browser is open, and appears within a refresh.
        try h.ok(["mkdir", "/made-elsewhere"])
        try t.waitFor("made-elsewhere/")
        // Another command holding the vault: the bar says busy; an action says so; it passes.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        let lock = h.home.appendingPathComponent("lock").path
        holder.arguments = [lock, "/usr/bin/flock", lock + ".transfers", "/bin/sleep", "4"]
        try holder.run()
        try t.waitFor("BUSY")
        try t.press("p")
        try t.waitFor("wait for it to finish")
        holder.waitUntilExit()
        try t.waitUntilGone("BUSY")
        try t.press("q")
        XCTAssertEqual(try t.exitStatusAndTerminalSettings().status, 0)
    }

    func testTerminalIsSaneAfterInterruptKillHangupAndACrash() throws {
        let h = try vault()
        // Ctrl-C, then signals as `kill` sends them, fatal ones included.
        for (how, signal) in [("C-c", SIGINT), ("TERM", SIGTERM), ("HUP", SIGHUP), ("QUIT", SIGQUIT),
                              ("SEGV", SIGSEGV), ("ABRT", SIGABRT), ("BUS", SIGBUS)] {
            // No crash report for a signal sent by hand (the trap below keeps it): just the signal's own end.
            let t = try TmuxPane(h, env: ["SWIFT_BACKTRACE": "enable=no"])
            try t.waitFor("top.txt")
            if how == "C-c" { try t.press("C-c") } else { kill(try t.browsePid(), signal) }
            let (status, stty) = try t.exitStatusAndTerminalSettings()
            XCTAssertEqual(status, 128 + signal, how)
            t.assertTerminalSane(stty)
        }
        // A bug: a Swift runtime trap while the screen is taken.
        let t = try TmuxPane(h, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_TRAP_AT": "browse-key"])
        try t.waitFor("top.txt")
        try t.press("j")
        let (status, stty) = try t.exitStatusAndTerminalSettings()
        XCTAssertTrue([128 + SIGILL, 128 + SIGTRAP].contains(status), "died of the trap: \(status)")
        t.assertTerminalSane(stty)
    }

    func testColoursUnlessNoColor() throws {
        let h = try vault()
        let plain = try TmuxPane(h)   // the harness sets NO_COLOR=1
        try plain.waitFor("top.txt")
        let mono = try plain.screen(escapes: true)
        XCTAssertFalse(mono.contains("\u{1b}[34m") || mono.contains(";34m"), "NO_COLOR: no colour")
        XCTAssertTrue(mono.contains("\u{1b}[7m") || mono.contains(";7m"), "reverse video still marks the bars")
        var env = h.env
        env.removeValue(forKey: "NO_COLOR")
        h.env = env
        let colour = try TmuxPane(h)
        try colour.waitFor("top.txt")
        let s = try colour.screen(escapes: true)
        XCTAssertTrue(s.contains("34m"), "folders in blue")
    }
}
