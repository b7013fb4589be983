import Foundation
import XCTest

/// The offline tree commands through the real binary (no keyring needed: password per command).
final class TreeCommandTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
    }

    func v(_ args: String...) throws -> CLIHarness.Result { try h.ok(args + h.pw) }
    func fails(_ args: String..., status: Int32, containing: String) throws {
        let r = try h.run(args + h.pw)
        XCTAssertEqual(r.status, status, "vault \(args): \(r.stderr)")
        XCTAssertTrue(r.stderr.contains(containing), "expected '\(containing)' in: \(r.stderr)")
    }

    func testMkdirPutLsTreeMvRm() throws {
        try v("mkdir", "-p", "/docs/2026/q4")
        let f = try h.localFile("report.pdf", Data(repeating: 7, count: 1000))
        try v("put", f, "/docs/2026")
        try v("put", f, "/docs/renamed.pdf")
        var ls = try XCTUnwrap(try v("ls", "/docs/2026", "--json").json as? [[String: Any]])
        XCTAssertEqual(ls.map { $0["name"] as? String }, ["q4", "report.pdf"])   // folders first
        let file = ls[1]
        XCTAssertEqual(file["size"] as? Int, 1000)
        XCTAssertEqual(file["contentState"] as? String, "LOCAL")
        XCTAssertEqual(file["pendingOp"] as? String, "upload")
        XCTAssertEqual(file["mimeType"] as? String, "application/pdf")
        XCTAssertTrue(try v("ls", "-l", "/docs").out.contains("renamed.pdf"))
        let tree = try v("tree").out
        XCTAssertTrue(tree.contains("q4/") && tree.contains("report.pdf"), tree)

        try v("mv", "/docs/renamed.pdf", "/docs/2026/q4")
        try v("mv", "/docs/2026/q4/renamed.pdf", "/docs/2026/q4/final.pdf")
        ls = try XCTUnwrap(try v("ls", "/docs/2026/q4", "--json").json as? [[String: Any]])
        XCTAssertEqual(ls.map { $0["name"] as? String }, ["final.pdf"])
        XCTAssertEqual(try v("cat", "/docs/2026/q4/final.pdf").stdout, Data(repeating: 7, count: 1000))

        try fails("mv", "/docs", "/docs/2026/q4", status: 5, containing: "into itself")
        try fails("rm", "/docs", status: 5, containing: "not empty")
        try v("rm", "/docs/2026/q4/final.pdf")
        try v("rm", "-r", "/docs")
        XCTAssertEqual((try v("ls", "--json").json as? [Any])?.count, 0)
        XCTAssertEqual(try h.blobFiles("staging").count, 0, "removed content leaves no blob behind")
    }

    func testInvalidNamesAndCollisions() throws {
        for bad in [".", "..", "/a/..", "/x/./y"] {
            try fails("mkdir", "-p", bad, status: 5, containing: "invalid name")
        }
        try fails("mkdir", "/" + String(repeating: "n", count: 256), status: 5, containing: "at most 255 bytes")
        try v("mkdir", "/" + String(repeating: "n", count: 255))
        try fails("mkdir", "/", status: 5, containing: "already exists")
        try v("mkdir", "/a")
        try fails("mkdir", "/a", status: 5, containing: "already exists")
        let f = try h.localFile("a", Data("x".utf8))
        try fails("put", f, "/", status: 5, containing: "is a folder")
        try v("put", f, "/b")
        try fails("put", f, "/b", status: 5, containing: "already exists")
        try fails("mv", "/a", "/b", status: 5, containing: "already exists")
        try fails("mkdir", "/nope/x", status: 4, containing: "no such folder")
        try fails("ls", "/nope", status: 4, containing: "no such file")
        try fails("put", h.root.appendingPathComponent("missing").path, status: 4, containing: "does not exist")
    }

    func testReplaceKeepsOldVersionAsRevision() throws {
        let a = try h.localFile("v1", Data("version one".utf8))
        let b = try h.localFile("v2", Data("version two".utf8))
        try v("put", a, "/f.txt")
        try v("put", b, "/f.txt", "--replace")
        XCTAssertEqual(try v("cat", "/f.txt").out, "version two")
        XCTAssertEqual(try h.blobFiles("staging").count, 2, "the previous version is kept")
        XCTAssertTrue(try v("doctor", "--verify").out.contains("consistent"))
    }

    func testEmptyAndSegmentBoundaryFiles() throws {
        for size in [0, 1, 65535, 65536, 65537, 3 * 65536] {
            var bytes = [UInt8](repeating: 0, count: size)
            for i in 0..<size { bytes[i] = UInt8(truncatingIfNeeded: i &* 31 &+ size) }
            let f = try h.localFile("s\(size)", Data(bytes))
            try v("put", f, "/s\(size)")
            XCTAssertEqual(try v("cat", "/s\(size)").stdout, Data(bytes), "size \(size)")
        }
    }

    func testGetExportsAndRefusesOverwrite() throws {
        let f = try h.localFile("g.txt", Data("export me".utf8))
        try v("put", f, "/g.txt")
        let dest = h.root.appendingPathComponent("out.txt").path
        try v("get", "/g.txt", dest)
        XCTAssertEqual(try String(contentsOfFile: dest, encoding: .utf8), "export me")
        try fails("get", "/g.txt", dest, status: 5, containing: "--force")
        try v("get", "/g.txt", dest, "--force")
    }

    func testRecursiveImportOfAFolderTree() throws {
        let dir = h.root.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try Data("one".utf8).write(to: dir.appendingPathComponent("1.txt"))
        try Data("two".utf8).write(to: dir.appendingPathComponent("a/2.txt"))
        try Data(repeating: 9, count: 70_000).write(to: dir.appendingPathComponent("a/b/3.bin"))
        try v("mkdir", "/imported")
        let r = try XCTUnwrap(try v("put", "-r", dir.path, "/imported", "--json").json as? [String: Any])
        XCTAssertEqual(r["files"] as? Int, 3)
        XCTAssertEqual(r["path"] as? String, "/imported/tree")
        XCTAssertEqual(r["ok"] as? Bool, true)
        XCTAssertEqual(try v("cat", "/imported/tree/a/2.txt").out, "two")
        XCTAssertEqual(try v("cat", "/imported/tree/a/b/3.bin").stdout, Data(repeating: 9, count: 70_000))
        XCTAssertEqual((try v("ls", "/imported/tree/empty", "--json").json as? [Any])?.count, 0)
        // A second import over the same names is refused whole: nothing half-imported.
        try fails("put", "-r", dir.path + "/", "/imported/tree", status: 5, containing: "already exists")
        XCTAssertEqual(try h.blobFiles("staging").count, 3)
        XCTAssertTrue(try v("doctor", "--verify").out.contains("consistent"))
    }

    /// `put -r DIR DEST` lands where `cp -r DIR DEST` would (DEST/DIR into an existing folder,
    /// DEST itself when it does not exist), and `DIR/` copies what is in DIR, as rsync does.
    func testRecursiveImportGoesWhereCpAndRsyncPutIt() throws {
        let dir = h.root.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("2026"), withIntermediateDirectories: true)
        try Data("p".utf8).write(to: dir.appendingPathComponent("2026/p.jpg"))
        func names(_ path: String) throws -> [String] {
            try XCTUnwrap(try v("ls", path, "--json").json as? [[String: Any]]).compactMap { $0["name"] as? String }
        }
        try v("put", "-r", dir.path)                              // no DEST: into /
        XCTAssertEqual(try names("/photos"), ["2026"])
        try v("mkdir", "/backup")
        try v("put", "-r", dir.path, "/backup")                   // an existing folder: DEST/DIR
        XCTAssertEqual(try names("/backup/photos/2026"), ["p.jpg"])
        try v("put", "-r", dir.path, "/album")                    // a new name: DEST is the copy
        XCTAssertEqual(try names("/album"), ["2026"])
        try v("put", "-r", dir.path + "/", "/flat")               // DIR/: the contents, as rsync
        XCTAssertEqual(try names("/flat"), ["2026"])
        try v("mkdir", "/into")
        try v("put", "-r", dir.path + "/", "/into")               // DIR/ into an existing folder: still the contents
        XCTAssertEqual(try names("/into"), ["2026"])
        try v("put", "-r", dir.appendingPathComponent("2026").path + "/..", "/up")   // `..` is the folder it names
        XCTAssertEqual(try names("/up"), ["2026"])
        try v("mkdir", "/up2")
        try v("put", "-r", dir.appendingPathComponent("2026").path + "/..", "/up2")
        XCTAssertEqual(try names("/up2"), ["photos"])
        let f = try h.localFile("plain.txt", Data("x".utf8))
        try v("put", f, "/file.txt")
        try fails("put", "-r", dir.path, "/file.txt", status: 5, containing: "is a file")
        try fails("put", "-r", "--replace", dir.path, status: 2, containing: "--replace")
    }

    func testOutboxRecordsEachLocalChange() throws {
        try v("mkdir", "/o")
        let f = try h.localFile("o.txt", Data("o".utf8))
        try v("put", f, "/o/o.txt")
        try v("mv", "/o/o.txt", "/o/p.txt")
        let s = try XCTUnwrap(try v("status", "--json").json as? [String: Any])
        XCTAssertEqual(s["pendingChanges"] as? Int, 3)
        try v("rm", "-r", "/o")     // never synced: nothing left to replay
        let s2 = try XCTUnwrap(try v("status", "--json").json as? [String: Any])
        XCTAssertEqual(s2["pendingChanges"] as? Int, 0)
    }
}
