import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Reading your own files needs no writable disk (issue 9, item 8): on a real read-only mount
/// and on a real full tmpfs, `ls`, `tree`, `cat`, `get`, `status` and `storage` work; commands that
/// change the vault fail clearly, with nothing changed.
final class ReadOnlyDiskTests: XCTestCase {
    var mnt: URL!
    var h: CLIHarness!
    let content = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 3) })

    /// Mounts a tmpfs of `size`, with a vault holding /d/f (300 kB) and /empty.
    func makeVault(size: String) throws {
        mnt = FileManager.default.temporaryDirectory.appendingPathComponent("vault-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mnt, withIntermediateDirectories: true)
        guard getuid() == 0, (try? runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mnt.path])) == 0 else {
            try? FileManager.default.removeItem(at: mnt)
            mnt = nil
            throw XCTSkip("needs root and tmpfs mounts (mount -t tmpfs was not permitted)")
        }
        h = try CLIHarness(keyring: false)
        h.env["VAULT_HOME"] = mnt.appendingPathComponent("vault").path
        try h.initVault()
        try h.ok(["mkdir", "/d"] + h.pw)
        try h.ok(["put", try h.localFile("f", content), "/d/f"] + h.pw)
        try h.ok(["put", try h.localFile("empty", Data()), "/empty"] + h.pw)
    }

    override func tearDown() {
        if let mnt {
            _ = try? runTool("/bin/umount", [mnt.path])
            try? FileManager.default.removeItem(at: mnt)
        }
        h = nil
    }

    /// ls, ls -l, tree, cat, get, status and storage all succeed and show the vault as it is.
    func assertReadsWork(file: StaticString = #filePath, line: UInt = #line) throws {
        let ls = try XCTUnwrap(try h.ok(["ls", "/d", "--json"] + h.pw, file: file, line: line).json as? [[String: Any]])
        XCTAssertEqual(ls.count, 1, file: file, line: line)
        try h.ok(["ls", "-l", "/"] + h.pw, file: file, line: line)
        XCTAssertTrue(try h.ok(["tree"] + h.pw, file: file, line: line).out.contains("f"), file: file, line: line)
        XCTAssertEqual(try h.ok(["cat", "/d/f"] + h.pw, file: file, line: line).stdout, content, file: file, line: line)
        XCTAssertEqual(try h.ok(["cat", "/empty"] + h.pw, file: file, line: line).stdout, Data(), file: file, line: line)
        let out = h.root.appendingPathComponent("exported-\(UUID().uuidString)")
        try h.ok(["get", "/d/f", out.path] + h.pw, file: file, line: line)
        XCTAssertEqual(try Data(contentsOf: out), content, file: file, line: line)
        let status = try XCTUnwrap(try h.ok(["status", "--json"] + h.pw, file: file, line: line).json as? [String: Any])
        XCTAssertEqual(status["nodes"] as? Int, 4, "\(status)", file: file, line: line)
        try h.ok(["storage"] + h.pw, file: file, line: line)
    }

    /// Every byte of the vault's folder, by relative path (to show nothing changed).
    func snapshot() throws -> [String: Data] {
        let root = mnt.appendingPathComponent("vault")
        var files: [String: Data] = [:]
        let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = e?.nextObject() as? URL {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            files[String(url.path.dropFirst(root.path.count))] = try Data(contentsOf: url)
        }
        return files
    }

    func testReadsWorkOnAReadOnlyMountAndWritesFailClearly() throws {
        try makeVault(size: "32m")
        let before = try snapshot()
        XCTAssertEqual(try runTool("/bin/mount", ["-o", "remount,ro", mnt.path]), 0)
        XCTAssertFalse(FileManager.default.isWritableFile(atPath: mnt.path + "/vault"), "the mount is read-only")
        try assertReadsWork()
        // Two readers at once share the read-only vault.
        let group = DispatchGroup()
        let statuses = Box<[Int32]>([])
        for _ in 0..<2 {
            group.enter()
            DispatchQueue.global().async { [h, content] in
                let r = try? h!.run(["cat", "/d/f"] + h!.pw)
                statuses.update { $0.append(r?.stdout == content ? r!.status : -1) }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(statuses.get(), [0, 0])
        // Writing commands are refused before they change anything, saying why.
        let local = try h.localFile("new", Data("new".utf8))
        for args in [["put", local, "/new"], ["mkdir", "/x"], ["rm", "/empty"], ["mv", "/empty", "/e2"], ["pin", "/d"],
                     ["storage", "--budget", "1M"], ["doctor"], ["evict"]] {
            let r = try h.run(args + h.pw)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("read-only filesystem"), "\(args): \(r.stderr)")
        }
        XCTAssertEqual(try runTool("/bin/mount", ["-o", "remount,rw", mnt.path]), 0)
        XCTAssertEqual(try snapshot(), before, "nothing in the vault changed")
        try assertReadsWork()
        try h.ok(["mkdir", "/x"] + h.pw)
    }

    /// Content that is not on this device cannot be downloaded onto a read-only mount: said at once (exit 10).
    func testNotDownloadedContentOnAReadOnlyMountSaysSo() throws {
        try makeVault(size: "16m")
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        try h.login(to: server)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/d/f"] + h.pw)
        XCTAssertEqual(try runTool("/bin/mount", ["-o", "remount,ro", mnt.path]), 0)
        let r = try h.run(["cat", "/d/f"] + h.pw)
        XCTAssertEqual(r.status, 10, r.stderr)
        XCTAssertTrue(r.stderr.contains("read-only filesystem"), r.stderr)
        XCTAssertEqual(try h.ok(["cat", "/empty"] + h.pw).stdout, Data())
        XCTAssertEqual(try runTool("/bin/mount", ["-o", "remount,rw", mnt.path]), 0)
        XCTAssertEqual(try h.ok(["cat", "/d/f"] + h.pw).stdout, content, "downloads once writable again")
        _ = server
    }

    /// With a failed-unlock limit, no password is tried where failures cannot be counted.
    func testReadOnlyMountRefusesPasswordGuessesUnderAFailedUnlockLimit() throws {
        try makeVault(size: "16m")
        try h.usePolicy(#"{"maxFailedUnlocks": 3}"#)
        try h.ok(["ls"] + h.pw)
        XCTAssertEqual(try runTool("/bin/mount", ["-o", "remount,ro", mnt.path]), 0)
        let r = try h.run(["cat", "/d/f"] + h.pw)
        XCTAssertEqual(r.status, 11, r.stderr)
        XCTAssertTrue(r.stderr.contains("failed unlocks cannot be counted"), r.stderr)
        XCTAssertEqual(r.stdout.count, 0)
    }

    func testReadsWorkOnAFullDiskAndWritesFailClearly() throws {
        try makeVault(size: "16m")
        // Fill the filesystem to the last block.
        let filler = mnt.appendingPathComponent("filler").path
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let block = [UInt8](repeating: 0xAA, count: 1 << 16)
        var piece = block.count
        while piece > 0 {
            if block.withUnsafeBytes({ write(fd, $0.baseAddress, piece) }) < 0 { piece /= 2 }
        }
        close(fd)
        var st = statvfs()
        XCTAssertEqual(statvfs(mnt.path, &st), 0)
        XCTAssertEqual(st.f_bavail, 0, "the disk is full")
        let before = try snapshot()
        try assertReadsWork()
        for args in [["put", try h.localFile("new", Data(repeating: 1, count: 100_000)), "/new"], ["mkdir", "/x"]] {
            let r = try h.run(args + h.pw)
            XCTAssertEqual(r.status, 8, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("space") || r.stderr.contains("full"), "\(args): \(r.stderr)")
        }
        var after = try snapshot()
        // Only access times may differ (best effort, and the disk is full: they are not written).
        XCTAssertEqual(Set(after.keys), Set(before.keys), "no file appeared or vanished")
        after["/metadata.db"] = before["/metadata.db"]
        XCTAssertEqual(after, before, "no blob or key file changed")
        unlink(filler)
        try assertReadsWork()
        try h.ok(["mkdir", "/x"] + h.pw)
    }
}
