import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Two-way sync through the real binaries and a real server (docs/sync.md): two and three
/// devices of one vault (separate VAULT_HOMEs, the second and third made by `vault join`), each
/// change made on one reaching the others, conflicts settled by `vault config set conflicts`,
/// revisions listed, read and restored, `--watch`, an expired cursor, a pull killed midway, the
/// delete guard, and a server that lies about the tree (exit 6, nothing applied).
final class TwoWaySyncTests: XCTestCase {
    var a: CLIHarness!
    var b: CLIHarness!
    var server: ServerHarness!

    override func setUpWithError() throws {
        try start()
    }

    override func tearDown() { a = nil; b = nil; server = nil }

    func start(serverArgs: [String] = []) throws {
        a = try CLIHarness(keyring: false)
        try a.initVault()
        a.useFastRetry()
        server = try ServerHarness(root: a.root, args: serverArgs)
        try a.login(to: server)
        try a.ok(["config", "set", "device-name", "laptop-a"] + a.pw)
        b = try device("laptop-b")
    }

    /// Another device of A's vault (`vault join`), named `name` in conflict copies.
    func device(_ name: String) throws -> CLIHarness {
        let h = try CLIHarness(keyring: false)
        h.useFastRetry()
        try h.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + h.pw)
        try h.ok(["config", "set", "device-name", name] + h.pw)
        return h
    }

    @discardableResult
    func sync(_ h: CLIHarness, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> CLIHarness.Result {
        try h.ok(["sync"] + extra + h.pw, file: file, line: line)
    }

    func put(_ h: CLIHarness, _ path: String, _ text: String, replace: Bool = false) throws {
        let local = try h.localFile(UUID().uuidString, Data(text.utf8))
        try h.ok(["put", local, path] + (replace ? ["--replace"] : []) + h.pw)
    }

    func cat(_ h: CLIHarness, _ path: String, _ extra: [String] = []) throws -> String {
        String(decoding: try h.ok(["cat", path] + extra + h.pw).stdout, as: UTF8.self)
    }

    /// Path → "folder" or the file's SHA-256, from `vault tree --json`.
    func tree(_ h: CLIHarness) throws -> [String: String] { try h.syncTree() }

    func node(_ h: CLIHarness, _ path: String) throws -> [String: Any]? {
        let parent = (path as NSString).deletingLastPathComponent
        let all = try XCTUnwrap(try h.ok(["ls", parent.isEmpty ? "/" : parent, "--json"] + h.pw).json as? [[String: Any]])
        return all.first { $0["path"] as? String == path }
    }

    // MARK: Both ways

    func testChangesOnEitherDeviceReachTheOther() throws {
        try a.ok(["mkdir", "/docs"] + a.pw)
        try put(a, "/docs/plan.txt", "the plan")
        try put(a, "/notes.txt", "notes v1")
        try sync(a)
        let pulled = try sync(b)
        XCTAssertTrue(pulled.out.contains("pulled"), pulled.out)
        XCTAssertEqual(try tree(b), try tree(a))
        // Metadata first: the content comes when read.
        XCTAssertEqual(try node(b, "/docs/plan.txt")?["contentState"] as? String, "NOT_DOWNLOADED")
        XCTAssertEqual(try cat(b, "/docs/plan.txt"), "the plan")

        // Rename, move and delete on B reach A.
        try b.ok(["mv", "/docs/plan.txt", "/docs/plan-final.txt"] + b.pw)
        try b.ok(["mkdir", "/archive"] + b.pw)
        try b.ok(["mv", "/notes.txt", "/archive/notes.txt"] + b.pw)
        try sync(b)
        try sync(a)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertNotNil(try node(a, "/archive/notes.txt"))
        XCTAssertEqual(try cat(a, "/archive/notes.txt"), "notes v1", "A keeps its local copy across the move")
        try b.ok(["rm", "-r", "/docs"] + b.pw)
        try sync(b)
        try sync(a)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertNil(try node(a, "/docs"))

        // An edit on A makes B's downloaded copy older ("older version"), then B reads the new one.
        XCTAssertEqual(try cat(b, "/archive/notes.txt"), "notes v1")
        try put(a, "/archive/notes.txt", "notes v2", replace: true)
        try sync(a)
        try sync(b)
        XCTAssertEqual(try node(b, "/archive/notes.txt")?["contentState"] as? String, "STALE")
        XCTAssertEqual(try node(b, "/archive/notes.txt")?["sha256"] as? String, sha256Hex(Data("notes v2".utf8)))
        XCTAssertTrue(try b.ok(["ls", "-l", "/archive"] + b.pw).out.contains("older version"))
        XCTAssertTrue(try b.ok(["tree"] + b.pw).out.contains("older version"))
        let older = try b.ok(["cat", "/archive/notes.txt"] + b.pw)
        XCTAssertEqual(older.out, "notes v1", "offline, the older version reads")
        XCTAssertTrue(older.stderr.contains("is an older version"), older.stderr)
        try b.ok(["evict", "/archive/notes.txt"] + b.pw)
        XCTAssertEqual(try cat(b, "/archive/notes.txt"), "notes v2", "evicted, the next read fetches the new one")

        // A third device sees the same tree from its first pull (the flat listing).
        let c = try device("desktop-c")
        try sync(c)
        XCTAssertEqual(try tree(c), try tree(a))
        // A second sync with nothing new changes nothing anywhere.
        try sync(a); try sync(b); try sync(c)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertEqual(try tree(c), try tree(b))
    }

    func testPinnedFilesDownloadTheNewVersion() throws {
        try put(a, "/p.txt", "one")
        try sync(a)
        try sync(b)
        try b.ok(["pin", "/p.txt"] + b.pw)
        try sync(b)
        XCTAssertEqual(try node(b, "/p.txt")?["contentState"] as? String, "LOCAL")
        try put(a, "/p.txt", "two", replace: true)
        try sync(a)
        let r = try sync(b)
        XCTAssertTrue(r.out.contains("Downloaded 1 pinned file"), r.out)
        XCTAssertEqual(try node(b, "/p.txt")?["contentState"] as? String, "LOCAL")
        XCTAssertEqual(try cat(b, "/p.txt", []), "two")
    }

    // MARK: Conflicts

    func testBothEditOfflineKeepsBothAndListsTheConflict() throws {
        try put(a, "/f.txt", "base")
        try sync(a)
        try sync(b)
        try put(a, "/f.txt", "edited on a", replace: true)
        try put(b, "/f.txt", "edited on b", replace: true)
        try sync(a)
        let r = try sync(b)
        XCTAssertTrue(r.out.contains("1 conflict(s) settled"), r.out)
        try sync(a)
        let names = try tree(b).keys.sorted()
        let copy = try XCTUnwrap(names.first { $0.hasPrefix("/f (conflict from laptop-b ") && $0.hasSuffix(").txt") }, "\(names)")
        XCTAssertEqual(try cat(b, "/f.txt"), "edited on a", "the version that reached the server first keeps the name")
        XCTAssertEqual(try cat(b, copy), "edited on b")
        XCTAssertEqual(try cat(a, copy), "edited on b", "A sees B's copy")
        XCTAssertEqual(try tree(a), try tree(b))

        let list = try XCTUnwrap(try b.ok(["conflicts", "--json"] + b.pw).json as? [[String: Any]])
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?["kind"] as? String, "edit-vs-edit")
        XCTAssertTrue((try b.ok(["status"] + b.pw).out).contains("conflicts 1 settled"), "status counts them")
        XCTAssertTrue(try b.ok(["conflicts", "--clear"] + b.pw).out.contains("Cleared 1"))
        XCTAssertEqual((try b.ok(["conflicts", "--json"] + b.pw).json as? [Any])?.count, 0)
    }

    func testLastWriterWinsKeepsTheOtherVersionAsARevision() throws {
        try b.ok(["config", "set", "conflicts", "last-writer-wins"] + b.pw)
        XCTAssertTrue(try b.ok(["config", "get", "conflicts"] + b.pw).out.contains("last-writer-wins"))
        try put(a, "/g.txt", "base")
        try sync(a)
        try sync(b)
        try put(a, "/g.txt", "from a", replace: true)
        try put(b, "/g.txt", "from b", replace: true)
        try sync(a)
        try sync(b)
        try sync(a)
        XCTAssertEqual(try node(a, "/g.txt")?["sha256"] as? String, sha256Hex(Data("from b".utf8)))
        try a.ok(["evict", "/g.txt"] + a.pw)
        XCTAssertEqual(try cat(a, "/g.txt"), "from b")
        XCTAssertEqual(try tree(a).keys.filter { $0.contains("conflict") }, [], "no copy")
        let revs = try XCTUnwrap((try a.ok(["revisions", "/g.txt", "--json"] + a.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        XCTAssertEqual(revs.count, 3, "base, A's and B's versions")
        let shas = Set(revs.compactMap { $0["sha256"] as? String })
        XCTAssertTrue(shas.contains(sha256Hex(Data("from a".utf8))), "A's version stays a revision")
        // A bad value is refused with the choices.
        let bad = try b.run(["config", "set", "conflicts", "newest"] + b.pw)
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("keep-both"), bad.stderr)
    }

    func testDeleteAgainstEditOnTheOtherDeviceKeepsTheEdit() throws {
        try put(a, "/e.txt", "v1")
        try sync(a)
        try sync(b)
        try b.ok(["rm", "/e.txt"] + b.pw)
        try put(a, "/e.txt", "v2", replace: true)
        try sync(a)
        try sync(b)
        XCTAssertEqual(try cat(b, "/e.txt"), "v2", "the edit wins over the delete")
        let list = try XCTUnwrap(try b.ok(["conflicts", "--json"] + b.pw).json as? [[String: Any]])
        XCTAssertEqual(list.first?["kind"] as? String, "delete-vs-edit")
    }

    // MARK: Revisions

    func testRevisionsListReadAndRestoreReachesTheOtherDevice() throws {
        try put(a, "/r.txt", "first")
        try sync(a)
        try put(a, "/r.txt", "second", replace: true)
        try sync(a)
        try sync(b)
        let list = try XCTUnwrap((try b.ok(["revisions", "/r.txt", "--json"] + b.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        XCTAssertEqual(list.count, 2)
        let first = try XCTUnwrap(list.first { $0["sha256"] as? String == sha256Hex(Data("first".utf8)) })
        let id = try XCTUnwrap(first["id"] as? String)
        XCTAssertEqual(first["isHead"] as? Bool, false)
        XCTAssertEqual(try cat(b, "/r.txt", ["--revision", id]), "first")
        XCTAssertEqual(try b.transfers().filter { $0["state"] as? String != "done" }.count, 0, "the revision's download is finished, not left waiting")
        let out = b.root.appendingPathComponent("first-out.txt")
        try b.ok(["get", "/r.txt", out.path, "--revision", id] + b.pw)
        XCTAssertEqual(try String(contentsOf: out, encoding: .utf8), "first")
        XCTAssertEqual(try cat(b, "/r.txt"), "second", "reading an old version leaves the current one")

        // Offline, the list is what was last seen.
        let offline = try b.ok(["revisions", "/r.txt"] + b.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_SERVER_URL": "http://127.0.0.1:9"])
        XCTAssertTrue(offline.stderr.contains("last seen"), offline.stderr)
        XCTAssertTrue(offline.out.contains(id), offline.out)

        // Restore on A: a new head with the old content; B follows at its next sync.
        try sync(a)
        let restored = try a.ok(["restore", "/r.txt", "--revision", id] + a.pw)
        XCTAssertTrue(restored.out.contains("Restored revision"), restored.out)
        XCTAssertEqual(try cat(a, "/r.txt"), "first")
        try sync(b)
        XCTAssertEqual(try node(b, "/r.txt")?["sha256"] as? String, sha256Hex(Data("first".utf8)))
        XCTAssertEqual(try node(b, "/r.txt")?["contentState"] as? String, "STALE", "B had read the second version")
        try b.ok(["evict", "/r.txt"] + b.pw)
        XCTAssertEqual(try cat(b, "/r.txt"), "first")
        let after = try XCTUnwrap((try b.ok(["revisions", "/r.txt", "--json"] + b.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        XCTAssertEqual(after.count, 3, "nothing overwritten: the restore is a new revision")
        XCTAssertEqual(try b.run(["restore", "/r.txt", "--revision", "nope"] + b.pw).status, 4)
    }

    // MARK: Watch

    func testWatchPullsWhatAnotherDeviceChangesAndStopsOnCtrlC() throws {
        try sync(b)
        let p = Process()
        p.executableURL = CLIHarness.productsDirectory.appendingPathComponent("vault")
        p.arguments = ["sync", "--watch"] + b.pw
        p.environment = b.env
        let err = Pipe(), out = Pipe()
        p.standardError = err
        p.standardOutput = out
        let stderr = Box(Data())
        err.fileHandleForReading.readabilityHandler = { h in let d = h.availableData; stderr.update { $0.append(d) } }
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        func waitFor(_ what: String, _ cond: () throws -> Bool) throws {
            let held = try eventually(within: 30) { try cond() || !p.isRunning }
            if try !held || !cond() { XCTFail("\(what); stderr: \(String(decoding: stderr.get(), as: UTF8.self))") }
        }
        try waitFor("the watch starts") { String(decoding: stderr.get(), as: UTF8.self).contains("Watching for changes") }
        try put(a, "/watched.txt", "seen without a manual sync")
        try sync(a)
        try waitFor("B pulls A's change") { try node(b, "/watched.txt") != nil }
        XCTAssertEqual(try cat(b, "/watched.txt"), "seen without a manual sync")
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, String(decoding: stderr.get(), as: UTF8.self))
        XCTAssertTrue(String(decoding: stderr.get(), as: UTF8.self).contains("Stopped watching"))
        try b.ok(["ls"] + b.pw)
    }

    // MARK: Cursor, crash, guard

    func testAnExpiredCursorFallsBackToTheListing() throws {
        try start(serverArgs: ["--changes-keep", "3"])
        try put(a, "/one.txt", "1")
        try sync(a)
        try sync(b)
        for i in 2...8 { try put(a, "/n\(i).txt", "\(i)") }
        try a.ok(["rm", "/one.txt"] + a.pw)
        try sync(a)
        let r = try b.ok(["sync", "--json"] + b.pw)
        XCTAssertEqual(((r.json as? [String: Any])?["pull"] as? [String: Any])?["listed"] as? Bool, true, r.out)
        XCTAssertEqual(try tree(b), try tree(a))
        XCTAssertNil(try node(b, "/one.txt"), "what the listing no longer shows is removed")
    }

    func testKillNineMidPullThenTheSameResult() throws {
        for i in 1...9 { try put(a, "/k\(i).txt", "content \(i)") }
        try a.ok(["mkdir", "/kd"] + a.pw)
        try sync(a)
        try sync(b)
        for i in 1...4 { try a.ok(["mv", "/k\(i).txt", "/kd/k\(i).txt"] + a.pw) }
        for i in 5...6 { try a.ok(["rm", "/k\(i).txt"] + a.pw) }
        try put(a, "/k9.txt", "changed", replace: true)
        try sync(a)
        let hooks = ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_PULL_PAGE": "2", "VAULT_TEST_CRASH_AT": "pull-page-applied#2"]
        let killed = try b.run(["sync"] + b.pw, env: hooks)
        XCTAssertEqual(killed.status, 9, "killed after the second page: \(killed.stderr)")
        try b.ok(["sync"] + b.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_PULL_PAGE": "2"])
        XCTAssertEqual(try tree(b), try tree(a))
        XCTAssertEqual(try cat(b, "/k9.txt"), "changed")
        try sync(b)
        XCTAssertEqual(try tree(b), try tree(a), "a sync after that changes nothing")
    }

    func testTheDeleteGuardStopsAMassRemovalUntilForced() throws {
        try a.ok(["mkdir", "/many"] + a.pw)
        for i in 1...30 { try put(a, "/many/m\(i).txt", "\(i)") }
        try sync(a)
        try sync(b)
        try a.ok(["rm", "-r", "/many"] + a.pw)
        try sync(a)
        let stopped = try b.run(["sync"] + b.pw)
        XCTAssertEqual(stopped.status, 5, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("would remove 31 of the 31 items"), stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("--force"), stopped.stderr)
        XCTAssertNotNil(try node(b, "/many/m1.txt"), "nothing removed")
        let limited = try b.run(["sync", "--max-delete", "100"] + b.pw)
        XCTAssertEqual(limited.status, 5, "half of the tree still trips it: \(limited.stderr)")
        try sync(b, ["--force"])
        XCTAssertNil(try node(b, "/many"))
    }

    // MARK: A lying server

    /// What B sees of the tree and its cursor must not change when the server lies.
    func expectRefused(_ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try tree(b)
        let r = try b.run(["sync"] + b.pw)
        XCTAssertEqual(r.status, 6, r.stderr, file: file, line: line)
        XCTAssertTrue(r.stderr.contains(message), r.stderr, file: file, line: line)
        XCTAssertEqual(try tree(b), before, "nothing applied", file: file, line: line)
        XCTAssertEqual(try b.run(["sync"] + b.pw).status, 6, "and the next sync refuses it again", file: file, line: line)
    }

    /// The server's live nodes (names are sealed: told apart by place and type).
    func serverNodes() throws -> [[String: Any]] {
        try server.curl("GET", "/v1/files?scope=all&pageSize=1000").json["files"] as? [[String: Any]] ?? []
    }

    /// A request as the server itself could make (its own account token, no keys).
    func send(_ method: String, _ path: String, _ json: String, ifMatch: Int? = nil) throws -> ServerHarness.Answer {
        try server.curl(method, path, json: json, headers: ifMatch.map { ["If-Match": "\"\($0)\""] } ?? [:])
    }

    /// PATCH of server node `id` (against its current version) with `json`.
    func patch(_ id: String, _ json: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let v = try XCTUnwrap(try serverNodes().first { $0["id"] as? String == id }?["version"] as? NSNumber).intValue
        let r = try send("PATCH", "/v1/files/\(id)", json, ifMatch: v)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self), file: file, line: line)
    }

    /// /F holding x and y, and an empty /G, on both devices; their server ids and name tokens.
    func liarSetUp() throws -> (f: String, g: String, files: [(id: String, name: String)]) {
        try a.ok(["mkdir", "/F"] + a.pw)
        try a.ok(["mkdir", "/G"] + a.pw)
        try put(a, "/F/x.txt", "x")
        try put(a, "/F/y.txt", "y")
        try sync(a)
        try sync(b)
        let all = try serverNodes()
        let folders = all.filter { $0["type"] as? String == "folder" && $0["parentId"] as? String == "root" }.compactMap { $0["id"] as? String }
        let f = try XCTUnwrap(folders.first { id in all.contains { $0["parentId"] as? String == id } })
        let g = try XCTUnwrap(folders.first { $0 != f })
        let files = all.filter { $0["parentId"] as? String == f }.map { ($0["id"] as? String ?? "", $0["name"] as? String ?? "") }
        XCTAssertEqual(files.count, 2)
        return (f, g, files)
    }

    // A lie stays in the change feed: the device refuses every sync until the feed no longer
    // holds it (a new listing after the server prunes it, or `vault join` anew). One lie per test.

    func testAServerThatMovesANodeIsRefusedAndNothingApplied() throws {
        let (_, g, files) = try liarSetUp()
        // It moves a node (without the record only a device can seal).
        try patch(files[0].id, #"{"parentId": "\#(g)"}"#)
        try expectRefused("listed in another folder than the one it was put in")
    }

    func testAServerThatListsAFoldersChildrenUnderAnotherIsRefused() throws {
        let (_, g, files) = try liarSetUp()
        for c in files { try patch(c.id, #"{"parentId": "\#(g)"}"#) }
        try expectRefused("listed in another folder than the one it was put in")
    }

    func testAServerThatSwapsTwoNamesIsRefused() throws {
        let (f, _, files) = try liarSetUp()
        let (x, y) = (files[0], files[1])
        // A third name token of that folder frees a place for the swap (the server trashes z).
        try put(a, "/F/z.txt", "z")
        try sync(a)
        try sync(b)
        let z = try XCTUnwrap(try serverNodes().first { $0["parentId"] as? String == f && ![x.id, y.id].contains($0["id"] as? String ?? "") })
        let zid = try XCTUnwrap(z["id"] as? String), zname = try XCTUnwrap(z["name"] as? String)
        XCTAssertEqual(try send("DELETE", "/v1/files/\(zid)", "", ifMatch: (z["version"] as? NSNumber)?.intValue).status, 200)
        try sync(b)
        try patch(x.id, #"{"name": "\#(zname)"}"#)
        try patch(y.id, #"{"name": "\#(x.name)"}"#)
        try patch(x.id, #"{"name": "\#(y.name)"}"#)
        try expectRefused("under another node's name")
    }

    // A node without an authentic record is quarantined, not a lie about the tree: each sync
    // exits 6 while it is held, and everything else still applies (TwoWaySyncTests+Quarantine).
    func testAServerThatInjectsANodeIsRefused() throws {
        let (f, _, files) = try liarSetUp()
        // A node of its own (it cannot seal a name or a record for this vault).
        let made = try send("POST", "/v1/files", #"{"name": "\#(files[0].name)x", "parentId": "\#(f)", "type": "folder"}"#)
        XCTAssertEqual(made.status, 201, String(decoding: made.body, as: UTF8.self))
        try expectRefused("not end-to-end encrypted")
        XCTAssertEqual(try tree(b).count, 4, "B's tree as before: F, G, x, y")
    }

    func testAServerThatRollsAFileBackIsRefused() throws {
        try put(a, "/roll.txt", "old")
        try sync(a)
        try put(a, "/roll.txt", "new", replace: true)
        try sync(a)
        try sync(b)
        XCTAssertEqual(try cat(b, "/roll.txt"), "new")
        // The server makes the old revision the head again, with its old content record.
        let node = try XCTUnwrap(try serverNodes().first { $0["type"] as? String == "file" })
        let id = try XCTUnwrap(node["id"] as? String)
        let revs = try server.curl("GET", "/v1/files/\(id)/revisions").json["revisions"] as? [[String: Any]] ?? []
        let old = try XCTUnwrap(revs.first { $0["id"] as? String != node["headRevisionId"] as? String }?["id"] as? String)
        let r = try send("POST", "/v1/files/\(id)/revisions/\(old)/restore", "", ifMatch: (node["version"] as? NSNumber)?.intValue)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        try expectRefused("rolled back")
        XCTAssertEqual(try cat(b, "/roll.txt"), "new")
    }
}
