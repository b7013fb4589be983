import Foundation
import VaultTestSupport
import XCTest

/// Sync while mounted (docs/mount.md "Sync while mounted"): what a pull beside the mount brings
/// reaches the kernel's caches at once (entries and attributes are cached for 30 s, dropped by
/// `fuse_lowlevel_notify_inval_*` when the database changes), and a time set through the mount
/// on a synced file reaches the other devices.
extension MountTests {
    /// This test's vault (A) and a second device B on one server, `name` synced to both.
    func twoDevices(_ server: ServerHarness, sharing files: [String: String]) throws -> CLIHarness {
        h.useFastRetry()
        try h.login(to: server)
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            try h.ok(["put", try h.localFile(name, Data(text.utf8)), "/" + name] + h.pw)
        }
        try h.ok(["sync"] + h.pw)
        let b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        try b.ok(["sync"] + b.pw)
        return b
    }

    func testAPullBesideTheMountIsSeenAtOnceAndAConflictCopyAppearsAsAFile() throws {
        let server = try ServerHarness(root: h.root, args: [], tls: false)
        let b = try twoDevices(server, sharing: ["c.txt": "base\n", "r.txt": "to be renamed\n"])
        try mount()
        // The kernel caches both names and their attributes (30 s).
        XCTAssertEqual(try py("""
            import os, sys
            m = sys.argv[1]
            print(os.stat(m + '/c.txt').st_size, os.stat(m + '/r.txt').st_size)
            """), "5 14")
        // A edits c.txt through the mount; B edits it too and renames r.txt.
        try py("open(__import__('sys').argv[1] + '/c.txt', 'w').write('edited on a\\n')")
        try b.ok(["put", "--replace", try b.localFile("c", Data("edited on b, longer\n".utf8)), "/c.txt"] + b.pw)
        try b.ok(["mv", "/r.txt", "/r2.txt"] + b.pw)
        try b.ok(["sync"] + b.pw)
        let started = Date()
        let r = try h.run(["sync"] + h.pw)   // beside the mount
        XCTAssertTrue(r.out.contains("conflict"), r.out + r.stderr)
        // Seen through the mount well within the 30 s the kernel may cache them.
        XCTAssertTrue(waitFor(5) { !FileManager.default.fileExists(atPath: self.mnt + "/r.txt") }, "the renamed file's old name is gone")
        XCTAssertEqual(try String(contentsOfFile: mnt + "/r2.txt", encoding: .utf8), "to be renamed\n")
        XCTAssertTrue(waitFor(5) { (try? self.py("import os, sys; print(os.stat(sys.argv[1] + '/c.txt').st_size)")) == "20" },
                      "c.txt has B's size")
        let names = try FileManager.default.contentsOfDirectory(atPath: mnt)
        let copy = try XCTUnwrap(names.first { $0.hasPrefix("c (conflict from ") && $0.hasSuffix(").txt") }, "\(names)")
        XCTAssertEqual(try String(contentsOfFile: mnt + "/" + copy, encoding: .utf8), "edited on a\n", "A's edit is the copy")
        XCTAssertEqual(try String(contentsOfFile: mnt + "/c.txt", encoding: .utf8), "edited on b, longer\n", "B's version keeps the name")
        print("sync while mounted: a pull's rename, new content and conflict copy seen \(Date().timeIntervalSince(started)) s after the sync started")
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertFalse(log.contains("checking the mount against the vault failed"), log)
    }

    func testATimeSetThroughTheMountOnASyncedFileReachesTheOtherDevice() throws {
        let server = try ServerHarness(root: h.root, args: [], tls: false)
        let b = try twoDevices(server, sharing: ["t.txt": "synced\n"])
        try mount()
        try py("import os, sys; os.utime(sys.argv[1] + '/t.txt', (1262304000, 1262304000))")   // touch -d 2010-01-01
        XCTAssertEqual(try h.node("/t.txt")["modifiedAt"] as? Int, 1_262_304_000, "stored in the vault")
        try h.ok(["sync"] + h.pw)   // beside the mount
        try b.ok(["sync"] + b.pw)
        XCTAssertEqual(try b.node("/t.txt")["modifiedAt"] as? Int, 1_262_304_000, "carried by sync")
        XCTAssertEqual(try b.ok(["cat", "/t.txt"] + b.pw).out, "synced\n", "the content is unchanged")
        // Back on A after a remount, and A's own next pull does not undo it.
        unmountNow()
        try h.ok(["sync"] + h.pw)
        try mount()
        XCTAssertEqual(try py("import os, sys; print(int(os.stat(sys.argv[1] + '/t.txt').st_mtime))"), "1262304000")
        XCTAssertEqual(try h.ok(["doctor"] + h.pw).status, 0)
    }
}
