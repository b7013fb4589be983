import Foundation
import VaultTestSupport
import XCTest

/// `vault mount` end to end through the `vault` binary and a real FUSE mount (docs/mount.md):
/// reading, the write patterns programs use, tampering, plaintext never on disk, locking, and a
/// killed mount process. Skipped where /dev/fuse or fusermount3 is missing; every test unmounts
/// in its teardown, also when it fails.
final class MountTests: XCTestCase {
    var h: CLIHarness!
    var mnt = ""

    override func setUpWithError() throws {
        guard FuseMounts.available else { throw XCTSkip("no /dev/fuse or fusermount3 here: install fuse3 to run the mount tests") }
        FuseMounts.removeDead()
        h = try CLIHarness(keyring: false)
        try h.initVault()
        mnt = h.root.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        guard h != nil else { return }
        unmountNow()
    }

    func unmountNow() {
        FuseMounts.unmount(mnt)
        // The mount's process ends once unmounted.
        _ = waitFor(5) { self.mountPids().isEmpty }
    }

    /// Runs python3 `code` with the mountpoint as argv[1]; its stdout.
    @discardableResult
    func py(_ code: String, expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let r = try h.run(["-c", code, mnt], program: "/usr/bin/python3")
        XCTAssertEqual(r.status, status, "python: \(r.stderr)", file: file, line: line)
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func mount(_ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try h.run(["mount", mnt] + extra + h.pw)
        XCTAssertEqual(r.status, 0, "mount: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.out.contains("Mounted the vault at"), r.out, file: file, line: line)
    }

    func waitFor(_ seconds: Double, _ cond: () -> Bool) -> Bool { eventually(within: seconds, cond) }

    /// The processes serving this test's mountpoint.
    func mountPids() -> [Int32] {
        let procs = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return procs.compactMap(Int32.init).filter { pid in
            guard let d = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let args = d.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return args.contains("mount") && args.contains(mnt)
        }
    }

    func bytes(_ n: Int, seed: Int = 7) -> Data {
        Data((0..<n).map { UInt8(truncatingIfNeeded: ($0 * 31 + seed) % 251) })
    }

    func testReadsTheTreeAndContent() throws {
        let big = bytes(3 * 65536 + 1234)
        try h.ok(["mkdir", "/Docs"] + h.pw)
        try h.ok(["put", try h.localFile("big.bin", big), "/Docs/big.bin"] + h.pw)
        try h.ok(["put", try h.localFile("a.txt", Data("alpha\n".utf8)), "/a.txt"] + h.pw)
        try mount()
        let listing = try py("""
            import os, sys, time
            m = sys.argv[1]
            st = os.stat(m + '/Docs/big.bin')
            assert abs(st.st_mtime - time.time()) < 60, st.st_mtime
            assert st.st_mode & 0o777 == 0o600 and os.stat(m + '/Docs').st_mode & 0o777 == 0o700
            print(sorted(os.listdir(m)), os.stat(m + '/a.txt').st_size, st.st_size)
            """)
        XCTAssertEqual(listing, "['Docs', 'a.txt'] 6 \(big.count)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: mnt + "/Docs/big.bin")), big)
        // A 4 KiB read in the middle, and an mmap read.
        try py("""
            import mmap, os, sys
            m = sys.argv[1]
            want = bytes(((i * 31 + 7) % 251) for i in range(3 * 65536 + 1234))
            fd = os.open(m + '/Docs/big.bin', os.O_RDONLY)
            assert os.pread(fd, 4096, 100000) == want[100000:104096]
            mm = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
            assert mm[:] == want
            mm.close(); os.close(fd)
            """)
        // cp -r out.
        let out = h.root.appendingPathComponent("out").path
        let cp = try h.run(["-r", mnt + "/Docs", out], program: "/bin/cp")
        XCTAssertEqual(cp.status, 0, cp.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/big.bin")), big)
    }

    func testWritesGoThroughTheVault() throws {
        try h.ok(["put", try h.localFile("old.txt", Data("old version\n".utf8)), "/target.txt"] + h.pw)
        try mount()
        try py("""
            import os, sys
            m = sys.argv[1]
            with open(m + '/new.txt', 'w') as f: f.write('written through the mount\\n')
            # rename over an existing file
            with open(m + '/tmp.txt', 'w') as f: f.write('replacement\\n')
            os.rename(m + '/tmp.txt', m + '/target.txt')
            # vim-style save: write a temporary, fsync, rename over the original
            with open(m + '/new.txt.swp', 'w') as f:
                f.write('saved by vim\\n'); f.flush(); os.fsync(f.fileno())
            os.rename(m + '/new.txt.swp', m + '/new.txt')
            # O_APPEND
            for i in range(3):
                fd = os.open(m + '/log.txt', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.write(fd, b'line %d\\n' % i); os.close(fd)
            # truncate, shorter and longer
            with open(m + '/trunc.bin', 'wb') as f: f.write(b'0123456789')
            os.truncate(m + '/trunc.bin', 4)
            assert open(m + '/trunc.bin', 'rb').read() == b'0123'
            os.truncate(m + '/trunc.bin', 6)
            assert open(m + '/trunc.bin', 'rb').read() == b'0123\\0\\0'
            # unlink while open: the open file still reads
            with open(m + '/gone.txt', 'w') as f: f.write('still here\\n')
            g = open(m + '/gone.txt')
            os.unlink(m + '/gone.txt')
            assert not os.path.exists(m + '/gone.txt')
            assert g.read() == 'still here\\n'; g.close()
            # read back while writing (rw), folders
            os.mkdir(m + '/dir'); os.mkdir(m + '/dir/sub')
            with open(m + '/dir/sub/x', 'w+') as f:
                f.write('abc'); f.seek(0); assert f.read() == 'abc'
            os.rename(m + '/dir/sub', m + '/dir/moved')
            os.rmdir(m + '/dir/moved') if not os.listdir(m + '/dir/moved') else None
            try: os.rmdir(m + '/dir')
            except OSError as e: assert e.errno == 39, e  # ENOTEMPTY
            # names the vault refuses
            try: open(m + '/' + 'x' * 256, 'w')
            except OSError as e: assert e.errno == 36, e  # ENAMETOOLONG
            """)
        XCTAssertEqual(try h.ok(["cat", "/new.txt"] + h.pw).out, "saved by vim\n")
        // A file created through the mount keeps no empty first version; a rewrite keeps the old one.
        XCTAssertEqual(try h.ok(["revisions", "/log.txt"] + h.pw).out.components(separatedBy: " 0 B ").count, 1)
        XCTAssertTrue(try h.ok(["revisions", "/trunc.bin"] + h.pw).out.contains("10 B"))
        XCTAssertEqual(try h.ok(["cat", "/target.txt"] + h.pw).out, "replacement\n")
        XCTAssertEqual(try h.ok(["cat", "/log.txt"] + h.pw).out, "line 0\nline 1\nline 2\n")
        XCTAssertEqual(try h.ok(["cat", "/trunc.bin"] + h.pw).stdout, Data("0123\0\0".utf8))
        XCTAssertEqual(try h.ok(["cat", "/dir/moved/x"] + h.pw).out, "abc")
        XCTAssertNotEqual(try h.run(["cat", "/gone.txt"] + h.pw).status, 0)
        // cp -r in, then read back through the vault.
        let src = h.root.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src.appendingPathComponent("inner"), withIntermediateDirectories: true)
        let payload = bytes(200_000, seed: 3)
        try payload.write(to: src.appendingPathComponent("inner/data.bin"))
        let cp = try h.run(["-r", src.path, mnt + "/copied"], program: "/bin/cp")
        XCTAssertEqual(cp.status, 0, cp.stderr)
        XCTAssertEqual(try h.ok(["cat", "/copied/inner/data.bin"] + h.pw).stdout, payload)
        unmountNow()
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
    }

    func testATamperedBlobReadsAsAnIOError() throws {
        let original = bytes(3 * 65536 + 1000)
        try h.ok(["put", try h.localFile("big.bin", original), "/big.bin"] + h.pw)
        let blob = try XCTUnwrap(try h.blobFiles("staging").first)
        var sealed = try Data(contentsOf: blob)
        sealed[112 + 65536 + 16 + 100] ^= 0x01   // inside the second segment
        try sealed.write(to: blob)
        try mount()
        let r = try py("""
            import os, sys
            fd = os.open(sys.argv[1] + '/big.bin', os.O_RDONLY)
            assert len(os.pread(fd, 4096, 0)) == 4096
            try:
                os.pread(fd, 4096, 65536 + 100); print('read tampered bytes')
            except OSError as e: print(e.errno)
            """)
        XCTAssertEqual(r, "5")   // EIO
    }

    func testAMarkerWrittenThroughTheMountIsNeverPlaintextOnDisk() throws {
        try mount()
        let marker = "MOUNT-MARKER-\(UUID().uuidString)"
        try py("""
            import os, sys
            with open(sys.argv[1] + '/secret.txt', 'w') as f:
                for i in range(20000): f.write('\(marker) %d\\n' % i)
                f.flush(); os.fsync(f.fileno())
            """)
        unmountNow()
        for dir in [h.home.path, h.tmp.path] {
            let g = try h.run(["-r", "-l", "-a", marker, dir], program: "/bin/grep")
            XCTAssertEqual(g.status, 1, "plaintext under \(dir): \(g.out)")
        }
        XCTAssertTrue(try h.ok(["cat", "/secret.txt"] + h.pw).out.hasPrefix(marker + " 0\n"))
    }

    func testAKilledMountIsCleanedUpByTheNextMount() throws {
        try mount()
        try py("""
            import sys
            with open(sys.argv[1] + '/kept.txt', 'w') as f: f.write('closed before the kill\\n')
            """)
        // A writer mid-write (not closed, not fsynced) when the mount dies.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        writer.arguments = ["-c", """
            import os, sys, time
            fd = os.open(sys.argv[1] + '/midwrite.txt', os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, b'y' * 1000000); print('written', flush=True); time.sleep(60)  # held open until the mount is killed
            """, mnt]
        let out = Pipe()
        writer.standardOutput = out
        try writer.run()
        defer { if writer.isRunning { writer.terminate() } }
        XCTAssertEqual(String(decoding: out.fileHandleForReading.readData(ofLength: 8), as: UTF8.self), "written\n")
        let pids = mountPids()
        XCTAssertEqual(pids.count, 1)
        for pid in pids { kill(pid, SIGKILL) }
        XCTAssertTrue(waitFor(5) { self.mountPids().isEmpty })
        XCTAssertEqual(try py("""
            import os, sys
            try: os.stat(sys.argv[1]); print('ok')
            except OSError as e: print(e.errno)
            """), "107")   // ENOTCONN
        writer.terminate(); writer.waitUntilExit()
        try mount()
        XCTAssertEqual(try String(contentsOfFile: mnt + "/kept.txt", encoding: .utf8), "closed before the kill\n")
        // Only the unsynced write is lost: the file it created is there, empty.
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: mnt + "/midwrite.txt")[.size] as? NSNumber, 0)
        unmountNow()
        // The write streamed into a blob with no name: the kill left nothing of it behind.
        let tmp = try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path)
        XCTAssertEqual(tmp.filter { $0.hasSuffix(".partial") }, [], "no partial blob left by the killed mount")
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
    }

    func testUnmountAndReadOnly() throws {
        try h.ok(["put", try h.localFile("a.txt", Data("alpha\n".utf8)), "/a.txt"] + h.pw)
        try mount(["--read-only"])
        XCTAssertEqual(try String(contentsOfFile: mnt + "/a.txt", encoding: .utf8), "alpha\n")
        XCTAssertEqual(try py("""
            import sys
            try: open(sys.argv[1] + '/b.txt', 'w'); print('written')
            except OSError as e: print(e.errno)
            """), "30")   // EROFS
        let again = try h.run(["mount", mnt] + h.pw)
        XCTAssertEqual(again.status, 5, again.stderr)   // already a mountpoint
        let second = h.root.appendingPathComponent("mnt2").path
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        let other = try h.run(["mount", second] + h.pw)
        XCTAssertEqual(other.status, 7, other.stderr)   // one mount per vault
        XCTAssertTrue(other.stderr.contains("mounted already at \(mnt)"), other.stderr)
        try h.ok(["unmount", mnt])
        XCTAssertTrue(waitFor(5) { self.mountPids().isEmpty })
        XCTAssertFalse(FileManager.default.fileExists(atPath: mnt + "/a.txt"))
        XCTAssertEqual(try h.run(["unmount", mnt]).status, 4)
    }

    func testGitAndSqlite3WorkOnTheMount() throws {
        for tool in ["/usr/bin/git", "/usr/bin/sqlite3"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) is not installed")
        }
        try mount()
        let repo = mnt + "/repo"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: false)
        let git = ["-C", repo, "-c", "user.email=t@example.org", "-c", "user.name=t"]
        for args in [["init", "-q"], ["add", "."], ["commit", "-qm", "first"], ["gc", "-q"], ["fsck"]] {
            if args == ["add", "."] { try Data("tracked\n".utf8).write(to: URL(fileURLWithPath: repo + "/f.txt")) }
            let r = try h.run(git + args, program: "/usr/bin/git")
            XCTAssertEqual(r.status, 0, "git \(args): \(r.stderr)")
        }
        XCTAssertTrue(try h.run(git + ["log", "--oneline"], program: "/usr/bin/git").out.contains("first"))
        let db = mnt + "/db.sqlite"
        try h.run([db, "create table t(x); insert into t values (1),(2);"], program: "/usr/bin/sqlite3")
        let r = try h.run([db, "insert into t values (3); select sum(x) from t; pragma integrity_check;"], program: "/usr/bin/sqlite3")
        XCTAssertEqual(r.out, "6\nok\n", r.stderr)
        unmountNow()
        try mount()
        XCTAssertEqual(try h.run([db, "select count(*) from t;"], program: "/usr/bin/sqlite3").out, "3\n")
        XCTAssertEqual(try h.run(["-C", repo, "show", "HEAD:f.txt"], program: "/usr/bin/git").out, "tracked\n")
    }

    /// `rsync -a` in and out (times kept), vim's save with a backup renamed aside, and
    /// LibreOffice's save (lock file, temporary, rename over the original).
    func testRsyncVimAndOfficeSavesWorkOnTheMount() throws {
        for tool in ["/usr/bin/rsync", "/usr/bin/vim"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) is not installed")
        }
        let src = h.root.appendingPathComponent("rsync-src")
        for (name, size) in [("a.txt", 10), ("sub/b.bin", 300_000), ("sub/deeper/c.txt", 0)] {
            let url = src.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try bytes(size, seed: size).write(to: url)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: url.path)
        }
        try mount()
        let into = try h.run(["-a", src.path + "/", mnt + "/synced/"], program: "/usr/bin/rsync")
        XCTAssertEqual(into.status, 0, "rsync in: \(into.stderr)")
        let back = h.root.appendingPathComponent("rsync-back")
        let out = try h.run(["-a", mnt + "/synced/", back.path + "/"], program: "/usr/bin/rsync")
        XCTAssertEqual(out.status, 0, "rsync out: \(out.stderr)")
        for name in ["a.txt", "sub/b.bin", "sub/deeper/c.txt"] {
            XCTAssertEqual(try Data(contentsOf: back.appendingPathComponent(name)), try Data(contentsOf: src.appendingPathComponent(name)), name)
            let t = try FileManager.default.attributesOfItem(atPath: back.appendingPathComponent(name).path)[.modificationDate] as? Date
            XCTAssertEqual(t?.timeIntervalSince1970, 1_600_000_000, "\(name): rsync -a keeps the time through the mount")
        }
        let again = try h.run(["-an", "--itemize-changes", src.path + "/", mnt + "/synced/"], program: "/usr/bin/rsync").out
        XCTAssertFalse(again.split(separator: "\n").contains { $0.hasPrefix(">f") }, "a second rsync sends no file again: \(again)")

        // vim: the original renamed to a backup, the new text written and fsynced, the backup removed.
        let notes = mnt + "/notes.txt"
        try Data("first line\n".utf8).write(to: URL(fileURLWithPath: notes))
        let vim = try h.run(["-Nu", "NONE", "-n", "-es", "-c", "set nobackup writebackup backupcopy=no", "-c", "$put ='second line'",
                             "-c", "wq", notes], program: "/usr/bin/vim")
        XCTAssertEqual(vim.status, 0, "vim: \(vim.stderr)")
        XCTAssertEqual(try String(contentsOfFile: notes, encoding: .utf8), "first line\nsecond line\n")

        // LibreOffice: a lock file beside the document, the new version in a temporary, renamed over.
        XCTAssertEqual(try py("""
            import os, sys
            d = sys.argv[1]
            open(d + '/report.odt', 'wb').write(b'version 1')
            lock = d + '/.~lock.report.odt#'
            with open(lock, 'w') as f: f.write('user,host,0;')
            with open(d + '/lu1234.tmp', 'wb') as f:
                f.write(b'version 2'); f.flush(); os.fsync(f.fileno())
            os.rename(d + '/lu1234.tmp', d + '/report.odt')
            os.unlink(lock)
            print(open(d + '/report.odt', 'rb').read().decode(), sorted(n for n in os.listdir(d) if 'report' in n or n.endswith('.tmp')))
            """), "version 2 ['report.odt']")
        unmountNow()
        XCTAssertEqual(try h.ok(["cat", "/report.odt"] + h.pw).out, "version 2")
        XCTAssertEqual(try h.ok(["cat", "/notes.txt"] + h.pw).out, "first line\nsecond line\n")
        XCTAssertEqual(try h.ok(["cat", "/synced/sub/b.bin"] + h.pw).stdout, bytes(300_000, seed: 300_000))
        XCTAssertEqual(try h.ok(["doctor"] + h.pw).status, 0)
    }

    func testAChangeMadeBesideTheMountIsSeenThroughIt() throws {
        try h.ok(["put", try h.localFile("f.txt", Data("first\n".utf8)), "/f.txt"] + h.pw)
        try mount()
        XCTAssertEqual(try String(contentsOfFile: mnt + "/f.txt", encoding: .utf8), "first\n")
        try h.ok(["put", "--replace", try h.localFile("f2.txt", Data("second version\n".utf8)), "/f.txt"] + h.pw)
        try h.ok(["mv", "/f.txt", "/g.txt"] + h.pw)
        // The kernel keeps attributes and entries for 1 s.
        XCTAssertTrue(waitFor(3) { !FileManager.default.fileExists(atPath: self.mnt + "/f.txt") })
        XCTAssertEqual(try String(contentsOfFile: mnt + "/g.txt", encoding: .utf8), "second version\n")
    }

    func testModificationTimesSetThroughTheMountAreKeptWithNewContent() throws {
        try mount()
        try py("""
            import os, sys
            m = sys.argv[1]
            with open(m + '/t.txt', 'w') as f: f.write('x')
            os.utime(m + '/t.txt', (1577836800, 1577836800))          # after the close (rsync, touch -d)
            with open(m + '/p.txt', 'w') as f:
                f.write('y'); f.flush(); os.utime(f.fileno(), (1500000000, 1500000000))   # before it (cp -p)
            fd = os.open(m + '/n.txt', os.O_CREAT | os.O_WRONLY, 0o600)     # on a file it creates (touch -d)
            os.utime(fd, (1400000000, 1400000000)); os.close(fd)
            assert os.stat(m + '/t.txt').st_mtime == 1577836800
            assert os.stat(m + '/n.txt').st_mtime == 1400000000, os.stat(m + '/n.txt')
            """)
        unmountNow()
        try mount()
        XCTAssertEqual(try py("""
            import os, sys
            print(*(int(os.stat(sys.argv[1] + n).st_mtime) for n in ('/t.txt', '/p.txt', '/n.txt')))
            """), "1577836800 1500000000 1400000000")
    }

    func testReadsGoOnBesideASyncAndChangesWaitForIt() throws {
        try h.ok(["put", try h.localFile("a.txt", Data("alpha\n".utf8)), "/a.txt"] + h.pw)
        try mount()
        // Hold the vault's locks as a running sync does (`lock` alone, `lock.transfers` shared).
        XCTAssertEqual(try py("""
            import fcntl, os, sys, time
            m, home = sys.argv[1], os.environ['VAULT_HOME']
            # Blocks until the mount's burst of requests has let the vault go.
            main = open(home + '/lock', 'a'); fcntl.flock(main, fcntl.LOCK_EX)
            side = open(home + '/lock.transfers', 'a'); fcntl.flock(side, fcntl.LOCK_SH)
            listed = os.listdir(m)
            text = open(m + '/a.txt').read()
            t0 = time.time()
            try: os.mkdir(m + '/new'); made = 'made'
            except OSError as e: made = str(e.errno)
            print(listed, repr(text), made, time.time() - t0 > 1.5)
            """), "['a.txt'] 'alpha\\n' 16 True")   // EBUSY after the lock timeout (2 s here)
        try h.ok(["mkdir", "/after"] + h.pw)
        XCTAssertTrue(waitFor(3) { FileManager.default.fileExists(atPath: self.mnt + "/after") })
    }

    func testAnotherDevicesChangesAreSeenThroughTheMountAfterASync() throws {
        let server = try ServerHarness(root: h.root, args: [], tls: false)
        h.useFastRetry()
        try h.login(to: server)
        try h.ok(["put", try h.localFile("p.txt", Data("pinned, first\n".utf8)), "/p.txt"] + h.pw)
        try h.ok(["put", try h.localFile("s.txt", Data("stale, first\n".utf8)), "/s.txt"] + h.pw)
        try h.ok(["pin", "/p.txt"] + h.pw)
        try h.ok(["sync"] + h.pw)
        let b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        try b.ok(["sync"] + b.pw)
        try mount()
        XCTAssertEqual(try String(contentsOfFile: mnt + "/p.txt", encoding: .utf8), "pinned, first\n")
        try b.ok(["put", try b.localFile("p2", Data("pinned, changed on b\n".utf8)), "/p.txt", "--replace"] + b.pw)
        try b.ok(["put", try b.localFile("s2", Data("stale, changed on b: longer\n".utf8)), "/s.txt", "--replace"] + b.pw)
        try b.ok(["put", try b.localFile("n", Data("new on b\n".utf8)), "/from-b.txt"] + b.pw)
        try b.ok(["sync"] + b.pw)
        try h.ok(["sync"] + h.pw)   // beside the mount
        XCTAssertTrue(waitFor(3) { (try? String(contentsOfFile: self.mnt + "/p.txt", encoding: .utf8)) == "pinned, changed on b\n" })
        // An unpinned file reads as its local, older version (as `cat` does), with that size.
        XCTAssertEqual(try String(contentsOfFile: mnt + "/s.txt", encoding: .utf8), "stale, first\n")
        XCTAssertEqual(try py("import os, sys; print(os.stat(sys.argv[1] + '/s.txt').st_size)"), "13")
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: mnt).contains("from-b.txt"))
    }

    /// Staged content is sealed on the vault's disk, so a file being written needs its size
    /// there twice while it commits: the full disk is ENOSPC at the write or at the close, and
    /// what was stored before is intact.
    func testAFullDiskIsENOSPCWithNothingLost() throws {
        let disk = h.root.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        guard getuid() == 0, (try? runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=40m", "tmpfs", disk.path])) == 0 else {
            throw XCTSkip("needs root and tmpfs mounts")
        }
        defer { unmountNow(); _ = try? runTool("/bin/umount", [disk.path]) }
        h.env["VAULT_HOME"] = disk.appendingPathComponent("vault").path
        try h.initVault()
        try mount()
        XCTAssertEqual(try py("""
            import os, sys
            m = sys.argv[1]
            keep = bytes(range(256)) * 40000                 # 10 MB: streamed and stored, it fits beside the 8 MiB reserve
            with open(m + '/keep.bin', 'wb') as f: f.write(keep)
            try:                                             # streamed: ENOSPC before the stream takes a byte
                with open(m + '/big.bin', 'wb') as f: f.write(b'x' * 30000000)
                print('stored')
            except OSError as e: print(e.errno, end=' ')
            try:                                             # staged (not written from its start)
                fd = os.open(m + '/scattered.bin', os.O_WRONLY | os.O_CREAT, 0o600)
                try:
                    os.pwrite(fd, b'y', 5)
                    for i in range(30): os.pwrite(fd, b'x' * 1000000, 1000000 * i)
                finally: os.close(fd)
                print('stored')
            except OSError as e: print(e.errno, end=' ')
            print(open(m + '/keep.bin', 'rb').read() == keep)
            """), "28 28 True")   // ENOSPC
        unmountNow()
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
        XCTAssertEqual(try h.ok(["cat", "/keep.bin"] + h.pw).stdout.count, 10_240_000)
    }

    /// A POSIX checklist of our own (xfstests and pjdfstest are not packaged here): each line
    /// is one rule, checked by errno.
    func testPOSIXChecklist() throws {
        try mount()
        try py("""
            import errno, os, sys
            m = sys.argv[1]
            def fails(code, f, *a):
                try: f(*a)
                except OSError as e:
                    assert e.errno == code, (f.__name__, a, e); return
                raise AssertionError('%s%r succeeded' % (f.__name__, a))
            os.mkdir(m + '/d'); open(m + '/d/f', 'w').write('f')
            fails(errno.EEXIST, os.mkdir, m + '/d')
            fails(errno.EEXIST, os.open, m + '/d/f', os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            fails(errno.ENOTEMPTY, os.rmdir, m + '/d')
            fails(errno.EISDIR, os.unlink, m + '/d')
            fails(errno.ENOTDIR, os.rmdir, m + '/d/f')
            fails(errno.EISDIR, os.open, m + '/d', os.O_WRONLY)
            fails(errno.ENOENT, os.stat, m + '/missing')
            fails(errno.ENOENT, os.rename, m + '/missing', m + '/x')
            os.mkdir(m + '/e'); open(m + '/e/g', 'w').write('g')
            fails(errno.ENOTEMPTY, os.rename, m + '/d', m + '/e')   # over a folder that is not empty
            fails(errno.EISDIR, os.rename, m + '/d/f', m + '/e')    # a file over a folder
            fails(errno.ENOTDIR, os.rename, m + '/e', m + '/d/f')   # a folder over a file
            fails(errno.EINVAL, os.rename, m + '/d', m + '/d/inside')  # into itself
            os.mkdir(m + '/empty'); os.rename(m + '/e', m + '/empty')   # over an empty folder
            assert os.listdir(m + '/empty') == ['g']
            os.rename(m + '/d/f', m + '/empty/moved')               # across folders
            assert open(m + '/empty/moved').read() == 'f' and os.listdir(m + '/d') == []
            # sparse write, read past the end, ftruncate on an open file
            fd = os.open(m + '/sparse', os.O_RDWR | os.O_CREAT, 0o600)
            os.pwrite(fd, b'end', 100000)
            assert os.fstat(fd).st_size == 100003 and os.pread(fd, 10, 50) == bytes(10)
            assert os.pread(fd, 10, 200000) == b''
            os.ftruncate(fd, 5); assert os.fstat(fd).st_size == 5
            os.close(fd)
            assert open(m + '/sparse', 'rb').read() == bytes(5)
            # O_TRUNC and truncate to zero do not need the old content
            open(m + '/sparse', 'w').close(); assert os.stat(m + '/sparse').st_size == 0
            # a folder listed across several readdir calls, in order, each name once
            os.mkdir(m + '/many')
            names = ['entry-%04d-%s' % (i, 'x' * 60) for i in range(200)]
            for n in names: os.close(os.open(m + '/many/' + n, os.O_CREAT | os.O_WRONLY, 0o600))
            assert sorted(os.listdir(m + '/many')) == names
            # LibreOffice's save: a lock file, a temporary written and fsynced, renamed over the original
            open(m + '/doc.odt', 'wb').write(b'v1')
            lock = m + '/.~lock.doc.odt#'
            open(lock, 'w').write(',user,host,01.01.2026 10:00,user;')
            with open(m + '/lu1234.tmp', 'wb') as f: f.write(b'v2'); f.flush(); os.fsync(f.fileno())
            os.rename(m + '/lu1234.tmp', m + '/doc.odt'); os.unlink(lock)
            assert open(m + '/doc.odt', 'rb').read() == b'v2' and not os.path.exists(lock)
            # removed while open: fstat, read, write and ftruncate go on through the handle, as a
            # scratch file's pattern (create, unlink, use) and `cat <&3` after an rm expect
            fd = os.open(m + '/scratch', os.O_RDWR | os.O_CREAT, 0o600)
            os.write(fd, b'scratch data'); os.unlink(m + '/scratch')
            st = os.fstat(fd); assert st.st_size == 12 and st.st_nlink == 0, st
            os.lseek(fd, 0, 0); assert os.read(fd, 100) == b'scratch data'
            os.ftruncate(fd, 7); assert os.fstat(fd).st_size == 7 and os.pread(fd, 100, 0) == b'scratch'
            os.pwrite(fd, b'!', 7); assert os.pread(fd, 100, 0) == b'scratch!'
            os.close(fd); assert not os.path.exists(m + '/scratch')
            open(m + '/kept', 'w').write('kept'); g = open(m + '/kept'); os.unlink(m + '/kept')
            assert os.fstat(g.fileno()).st_size == 4 and g.read() == 'kept'; g.close()
            # removed before the first write through the handle (write-only and read-write, no
            # O_TRUNC): the content it had at the open is what the handle changes
            open(m + '/wo', 'w').write('write only'); fd = os.open(m + '/wo', os.O_WRONLY)
            os.unlink(m + '/wo')
            import time; time.sleep(1.5)   # the mount's check after a change (once a second) runs first
            assert os.fstat(fd).st_size == 10; os.pwrite(fd, b'W', 0); assert os.fstat(fd).st_size == 10; os.close(fd)
            open(m + '/rw', 'w').write('read write'); fd = os.open(m + '/rw', os.O_RDWR)
            os.rename(m + '/kept2', m + '/rw') if os.path.exists(m + '/kept2') else os.unlink(m + '/rw')
            time.sleep(1.5)                # and a first ftruncate after that check too
            os.ftruncate(fd, 4); assert os.pread(fd, 100, 0) == b'read', os.pread(fd, 100, 0)
            os.pwrite(fd, b'!', 4); assert os.pread(fd, 100, 0) == b'read!'; os.close(fd)
            assert not os.path.exists(m + '/wo') and not os.path.exists(m + '/rw')
            # names the vault refuses
            fails(errno.ENAMETOOLONG, os.mkdir, m + '/' + 'n' * 256)
            """)
        XCTAssertEqual(try h.ok(["cat", "/doc.odt"] + h.pw).out, "v2")
    }

    /// A file written from its start straight to its end streams into its sealed blob (nothing
    /// staged, no second pass at the close); every other pattern first moves what was streamed
    /// into the staging and goes on from there, with the same bytes in the end.
    func testSequentialWritesStreamAndEveryOtherPatternGoesOnFromWhatWasWritten() throws {
        try mount()
        try py("""
            import hashlib, os, sys
            m = sys.argv[1]
            block = bytes(range(256)) * 4096                      # 1 MiB
            def check(name, want):
                got = open(m + '/' + name, 'rb').read()
                assert got == want, (name, len(got), len(want))
            # straight through (cp, a download, a build output)
            with open(m + '/straight', 'wb') as f:
                for _ in range(3): f.write(block)
            check('straight', block * 3)
            # a write back into what was streamed (a header fixed up at the end, as tar and zip do)
            fd = os.open(m + '/fixup', os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, block); os.write(fd, block); os.pwrite(fd, b'HEADER', 100); os.write(fd, b'tail')
            os.close(fd)
            check('fixup', block[:100] + b'HEADER' + block[106:] + block + b'tail')
            # a read of what was just written, through the same descriptor
            fd = os.open(m + '/readback', os.O_RDWR | os.O_CREAT, 0o600)
            os.write(fd, block[:200000]); assert os.pread(fd, 10, 150000) == block[150000:150010]
            os.write(fd, b'more'); os.close(fd)
            check('readback', block[:200000] + b'more')
            # cut short, and emptied, while streaming
            fd = os.open(m + '/cut', os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, block); os.ftruncate(fd, 70000); os.pwrite(fd, b'!', 70000); os.close(fd)
            check('cut', block[:70000] + b'!')
            fd = os.open(m + '/emptied', os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, block); os.ftruncate(fd, 0); os.lseek(fd, 0, 0); os.write(fd, b'again'); os.close(fd)
            check('emptied', b'again')
            # fsync in the middle, then more (a log, a database journal)
            fd = os.open(m + '/synced', os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, block); os.fsync(fd); os.write(fd, block[:5]); os.fsync(fd); os.write(fd, b'end'); os.close(fd)
            check('synced', block + block[:5] + b'end')
            with open(m + '/log', 'ab') as f:
                for i in range(20): f.write(b'line %d\\n' % i); f.flush(); os.fsync(f.fileno())
            check('log', b''.join(b'line %d\\n' % i for i in range(20)))
            # replaced in place (O_TRUNC): a new version, the old one kept as a revision
            with open(m + '/straight', 'wb') as f: f.write(block[:1000])
            check('straight', block[:1000])
            # an empty file stays empty
            open(m + '/empty', 'wb').close(); check('empty', b'')
            """)
        XCTAssertEqual(try h.ok(["cat", "/fixup"] + h.pw).stdout.count, 2 * 1_048_576 + 4)
        unmountNow()
        let doctor = try h.run(["doctor", "--verify"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
        let tmp = try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path)
        XCTAssertEqual(tmp, [], "nothing left in tmp/")
    }

    func testThePolicyCanForbidMounting() throws {
        let policy = h.root.appendingPathComponent("policy.json")
        for rule in [#"{"mountAllowed": false}"#, #"{"plaintextExport": false}"#] {
            try Data(rule.utf8).write(to: policy)
            let r = try h.run(["mount", mnt] + h.pw, env: ["VAULT_POLICY_FILE": policy.path])
            XCTAssertEqual(r.status, 11, r.stderr)
            XCTAssertTrue(mountPids().isEmpty)
        }
    }
}

/// Locking reaches the mount: with a keyring session, `vault lock` makes open files and the tree
/// EACCES within about a second, and `vault unlock` resumes.
final class MountLockTests: XCTestCase {
    func testLockWhileAFileIsOpenThenUnlockResumes() throws {
        guard FuseMounts.available else { throw XCTSkip("no /dev/fuse or fusermount3 here: install fuse3 to run the mount tests") }
        FuseMounts.removeDead()
        guard CLIHarness.keyringAvailable else { throw XCTSkip("needs a Secret Service (scripts/with-keyring.sh)") }
        let h = try CLIHarness()
        try h.initVault()
        try h.ok(["unlock"] + h.pw)
        try h.ok(["put", try h.localFile("a.bin", Data(repeating: 0x61, count: 300_000)), "/a.bin"])
        let mnt = h.root.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        defer { FuseMounts.unmount(mnt) }
        let m = try h.run(["mount", mnt])
        XCTAssertEqual(m.status, 0, m.stderr)
        // A python process holds the file open across the lock and the unlock.
        let script = """
            import os, sys, time
            m = sys.argv[1]
            fd = os.open(m + '/a.bin', os.O_RDONLY)
            assert os.pread(fd, 10, 0) == b'a' * 10
            w = os.open(m + '/w.txt', os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(w, b'written before the lock, closed after it\\n')
            print('open', flush=True)
            sys.stdin.readline()                      # `vault lock` has returned
            def denied(f):
                try: f(); return 'served'
                except OSError as e: return str(e.errno)
            end = time.time() + 5                     # the mount checks the session once a second
            while denied(lambda: os.stat(m)) != '13' and time.time() < end: time.sleep(0.05)   # a bounded poll: the lock is seen only through errno
            r1 = denied(lambda: os.pread(fd, 10, 200000))
            r2 = denied(lambda: os.pread(fd, 10, 0))
            r3 = denied(lambda: os.listdir(m))
            r4 = denied(lambda: os.close(w))          # kept in memory, committed at the unlock
            print(r1, r2, r3, r4, flush=True)
            sys.stdin.readline()                      # `vault unlock` has returned
            end = time.time() + 5
            while denied(lambda: os.stat(m)) != 'served' and time.time() < end: time.sleep(0.05)   # the same poll for the resume
            print(os.pread(fd, 10, 200000) == b'a' * 10, flush=True)
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", script, mnt]
        p.environment = h.env
        let inPipe = Pipe(), outPipe = Pipe()
        let errPipe = Pipe()
        p.standardInput = inPipe; p.standardOutput = outPipe; p.standardError = errPipe
        defer { if p.isRunning { p.terminate() } }
        try p.run()
        // A safety net, not a timing: a hang fails the test instead of stopping the suite.
        let pid = p.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer { watchdog.cancel() }
        let reader = outPipe.fileHandleForReading
        func line() -> String {
            var s = Data()
            while true {
                let b = reader.readData(ofLength: 1)
                if b.isEmpty || b == Data("\n".utf8) { return String(decoding: s, as: UTF8.self) }
                s.append(b)
            }
        }
        let first = line()
        if first != "open" {
            p.waitUntilExit()
            return XCTFail("python: \(String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        }
        try h.ok(["lock"])
        inPipe.fileHandleForWriting.write(Data("\n".utf8))
        XCTAssertEqual(line(), "13 13 13 13")   // EACCES: nothing served, cached pages included
        try h.ok(["unlock"] + h.pw)
        inPipe.fileHandleForWriting.write(Data("\n".utf8))
        XCTAssertEqual(line(), "True")
        p.waitUntilExit()
        XCTAssertEqual(try h.ok(["cat", "/w.txt"]).out, "written before the lock, closed after it\n")
    }
}
