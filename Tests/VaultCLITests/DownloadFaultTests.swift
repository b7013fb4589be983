import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Downloads that go wrong half-way: a server that sends more than the file's size (or headers
/// that disagree with it), and a disk that fills up while the sealed blob is being written —
/// the real `vault` binary against a real `vault-server`.
final class DownloadFaultTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    /// The vault's folder (`VAULT_HOME`); not `h.home` when the vault lives on a test mount.
    var home: URL!

    /// A vault (in `vaultHome`, or the harness's own) logged in to a fresh server.
    func start(vaultHome: URL? = nil) throws {
        h = try CLIHarness(keyring: false)
        if let vaultHome { h.env["VAULT_HOME"] = vaultHome.path }
        home = vaultHome ?? h.home
        h.useFastRetry()
        try h.initVault()
        server = try ServerHarness(root: h.root, args: [], tls: false)
        try h.login(to: server)
    }

    override func tearDown() {
        server = nil
        h = nil
    }

    /// A random file put into the vault, uploaded, and evicted (its content only on the server).
    func remoteOnlyFile(_ name: String, bytes: Int) throws -> Data {
        let data = TestData.data(bytes, for: self.name)
        try h.ok(["put", try h.localFile(name, data), "/"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/" + name] + h.pw)
        XCTAssertEqual(try node("/" + name)["contentState"] as? String, "NOT_DOWNLOADED")
        return data
    }

    func node(_ path: String) throws -> [String: Any] { try h.node(path) }
    func transfers() throws -> [[String: Any]] { try h.transfers() }

    /// Files in the vault's `tmp/` (partial downloads).
    func partials() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("tmp").path)
    }

    func cacheBlobs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("cache").path).filter { $0.hasSuffix(".blob") }
    }

    /// The download of `path` failed and left nothing: not published, no blob, no partial, the
    /// transfer marked failed.
    func assertNothingKept(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try node(path)["contentState"] as? String, "NOT_DOWNLOADED", "nothing published", file: file, line: line)
        XCTAssertEqual(try cacheBlobs(), [], "no blob in the cache", file: file, line: line)
        XCTAssertEqual(try partials(), [], "the partial download was discarded", file: file, line: line)
        XCTAssertTrue(try transfers().contains { $0["direction"] as? String == "download" && $0["state"] as? String == "failed" },
                      "the download is recorded as failed", file: file, line: line)
    }

    /// Waits (up to 15 s) for the server's log line that says how many of the extra bytes a
    /// lying content body handed to the connection before it ended.
    func extraBytesHandedOut() throws -> Int {
        var handedOut: Int?
        _ = eventually(within: 15) {
            for line in server.log.split(separator: "\n") where line.contains("a content body ended after") {
                guard let r = line.range(of: "ended after ") else { continue }
                if let n = Int(line[r.upperBound...].prefix { $0.isNumber }) { handedOut = n; return true }
            }
            return false
        }
        guard let n = handedOut else { throw TransferTestError("the server never logged the end of the lying content body") }
        return n
    }

    // MARK: - A server that sends more than the file's size

    /// The server streams the file and then 256 MiB more, chunked (no Content-Length, so only
    /// the byte count can tell): the client stops at the first byte past the file's size, says
    /// so, and keeps nothing; with the fault off the next `vault cat` works.
    func testServerSendingMoreThanTheFileSizeIsStoppedAtOnceAndNothingPublished() throws {
        try start()
        let data = try remoteOnlyFile("more.bin", bytes: 1 << 20)
        let extra = 256 << 20
        try server.faults(#"{"extraContentBytes": \#(extra), "contentWithoutLength": true}"#)
        let r = try h.run(["cat", "/more.bin"] + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertTrue(r.stderr.contains("sent more than the file's size"), r.stderr)
        XCTAssertTrue(r.stderr.contains("hint:"), r.stderr)
        XCTAssertTrue(r.stdout.isEmpty, "nothing of the content reached the reader")
        try assertNothingKept("/more.bin")
        // The client stopped reading: only what sat in socket buffers left the server.
        let handedOut = try extraBytesHandedOut()
        print("lying server: \(handedOut) of \(extra) extra bytes left the server before the client hung up")
        XCTAssertLessThan(handedOut, 32 << 20, "the client kept reading past the file's size")

        try server.faults("{}")
        XCTAssertEqual(try h.ok(["cat", "/more.bin"] + h.pw).stdout, data)
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("Checked"))
        XCTAssertEqual(try partials(), [])
    }

    /// Headers that disagree with the file's size are refused before any body byte is kept: a
    /// whole-file answer whose Content-Length is bigger than the file, and a resumed (206)
    /// answer whose Content-Range claims a bigger file. The partial of the resumed download is
    /// discarded (the server it came from lies), and the next download starts over and works.
    func testContentLengthOrContentRangeDisagreeingWithTheFileSizeIsRefused() throws {
        try start()
        let data = try remoteOnlyFile("doc.bin", bytes: 6 << 20)

        try server.faults(#"{"extraContentBytes": 4096}"#)
        var r = try h.run(["cat", "/doc.bin"] + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertTrue(r.stderr.contains("more than the file's size"), r.stderr)
        XCTAssertTrue(r.stderr.contains("Content-Length"), r.stderr)
        XCTAssertTrue(r.stdout.isEmpty)
        try assertNothingKept("/doc.bin")

        // A download killed (SIGKILL) half-way leaves a sealed partial; the resume asks for the rest.
        try server.faults("{}")
        let killed = try h.run(["cat", "/doc.bin"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "download-midway"])
        XCTAssertEqual(killed.status, 9, killed.stderr)
        XCTAssertEqual(try partials().count, 1)
        try server.faults(#"{"extraContentBytes": 4096, "contentWithoutLength": true}"#)
        r = try h.run(["cat", "/doc.bin"] + h.pw)
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertTrue(r.stderr.contains("resuming the download at"), r.stderr)
        XCTAssertTrue(r.stderr.contains("more than the file's size"), r.stderr)
        XCTAssertTrue(r.stderr.contains("Content-Range"), r.stderr)
        XCTAssertTrue(r.stdout.isEmpty)
        try assertNothingKept("/doc.bin")

        try server.faults("{}")
        let ok = try h.ok(["cat", "/doc.bin"] + h.pw)
        XCTAssertEqual(ok.stdout, data)
        XCTAssertFalse(ok.stderr.contains("resuming"), "the lying server's partial was not reused: \(ok.stderr)")
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("Checked"))
    }

    // MARK: - The disk fills up mid-download

    /// The free-space check passes, then the disk fills up while the sealed blob is written
    /// (a real tmpfs, filled by another process while the download is in flight): a clear
    /// "disk full" error (exit 8) with what to do, no plaintext anywhere, nothing published,
    /// the partial deleted so the space comes back, the vault intact; with room again the
    /// download completes with the right bytes.
    func testDiskFillingUpMidDownloadIsClearAndGivesTheSpaceBack() throws {
        let mnt = FileManager.default.temporaryDirectory.appendingPathComponent("vault-dlfull-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mnt, withIntermediateDirectories: true)
        defer { _ = try? runTool("/bin/umount", [mnt.path]); try? FileManager.default.removeItem(at: mnt) }
        guard getuid() == 0, (try? runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt.path])) == 0 else {
            throw XCTSkip("needs root and tmpfs mounts")
        }
        func free() -> Int64 {
            var s = statvfs()
            return statvfs(mnt.path, &s) == 0 ? Int64(s.f_bavail) * Int64(s.f_frsize) : -1
        }
        try start(vaultHome: mnt.appendingPathComponent("vault"))
        let size = 12 << 20
        let data = try remoteOnlyFile("big.bin", bytes: size)
        XCTAssertGreaterThan(free(), 40 << 20, "room for the download: the free-space check will pass")

        // The server waits before it answers, so the download is in flight (its sealed partial
        // created, the free-space check passed) when the disk fills up, leaving 4 MiB.
        try server.faults(#"{"delayMs": 1500}"#)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        p.arguments = ["cat", "/big.bin"] + h.pw
        p.environment = h.env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let stdoutBox = Box<Data>(Data())
        let reading = DispatchGroup()
        reading.enter()
        let outHandle = out.fileHandleForReading
        DispatchQueue.global().async { stdoutBox.set(outHandle.readDataToEndOfFile()); reading.leave() }
        _ = eventually(within: 20) { !((try? partials())?.isEmpty ?? true) || !p.isRunning }
        XCTAssertTrue(p.isRunning, "vault cat ended before the disk could be filled")
        let filler = mnt.appendingPathComponent("filler")
        XCTAssertEqual(try runTool("/usr/bin/fallocate", ["-l", String(free() - (4 << 20)), filler.path]), 0)
        let freeAfterFill = free()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reading.wait()
        p.waitUntilExit()
        try server.faults("{}")

        XCTAssertEqual(p.terminationStatus, 8, stderr)
        XCTAssertTrue(stderr.contains("disk became full while downloading /big.bin"), stderr)
        XCTAssertFalse(stderr.contains("not enough free space to download"), "the pre-check passed; the disk filled later: \(stderr)")
        XCTAssertTrue(stderr.contains("partial download was deleted"), stderr)
        XCTAssertTrue(stderr.contains("hint: free some space so that at least"), stderr)
        XCTAssertTrue(stdoutBox.get().isEmpty, "no plaintext reached standard output")
        // The partial was deleted: the space it took is free again (the machine recovers).
        XCTAssertEqual(try partials(), [])
        XCTAssertGreaterThanOrEqual(free() + (1 << 20), freeAfterFill, "the space the partial download took was given back")
        // No plaintext anywhere on the vault's disk or in the command's TMPDIR.
        let samples = stride(from: 0, to: size, by: 1 << 20).map { data.subdata(in: $0..<($0 + 64)) }
        for dir in [mnt, h.tmp] {
            let files = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: [.isRegularFileKey])!
            for case let f as URL in files where f != filler && (try? f.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                let bytes = try Data(contentsOf: f)
                XCTAssertFalse(samples.contains { bytes.range(of: $0) != nil }, "plaintext of big.bin in \(f.path)")
            }
        }
        // Nothing published; the vault is intact even while the disk is still full.
        XCTAssertEqual(try node("/big.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        XCTAssertEqual(try cacheBlobs(), [])
        let t = try XCTUnwrap(try transfers().first { $0["direction"] as? String == "download" })
        XCTAssertEqual(t["state"] as? String, "failed")
        XCTAssertTrue((t["error"] as? String ?? "").contains("disk became full"), "\(t)")
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("Checked"))

        // With room again the download completes, and the bytes are right.
        try FileManager.default.removeItem(at: filler)
        let exported = h.root.appendingPathComponent("big-exported.bin")
        let got = try h.ok(["get", "/big.bin", exported.path] + h.pw)
        XCTAssertFalse(got.stderr.contains("resuming"), got.stderr)
        XCTAssertEqual(try Data(contentsOf: exported), data)
        XCTAssertEqual(try node("/big.bin")["contentState"] as? String, "LOCAL")
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("Checked"))
        XCTAssertEqual(try partials(), [])
    }

    // MARK: - A download killed after its publish

    /// The download rows of `path`, as `vault transfers --json` shows them.
    func downloadStates(_ path: String) throws -> [String] {
        try transfers().filter { $0["direction"] as? String == "download" && $0["path"] as? String == path }
            .compactMap { $0["state"] as? String }
    }

    /// A download killed (SIGKILL) right after its content is published: the file is LOCAL and
    /// its transfer is done (one transaction), not "interrupted" for ever.
    func testADownloadKilledRightAfterItsPublishIsDone() throws {
        try start()
        let data = try remoteOnlyFile("k.bin", bytes: 3000)
        let killed = try h.run(["cat", "/k.bin"] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "download-after-publish"])
        XCTAssertEqual(killed.status, 9, killed.stderr)
        XCTAssertEqual(try node("/k.bin")["contentState"] as? String, "LOCAL")
        XCTAssertEqual(try downloadStates("/k.bin"), ["done"])
        XCTAssertFalse(try h.ok(["transfers"] + h.pw).out.contains("interrupted"))
        XCTAssertEqual(try h.ok(["cat", "/k.bin"] + h.pw).stdout, data)
    }

    /// A download row left unfinished behind a file whose content is here (a kill between the
    /// publish and the row, as vaults written before they were one transaction have it; made here
    /// by killing a download half-way, then putting the same bytes as the file's new version):
    /// `vault transfers resume` and `vault doctor` each settle it as done (and doctor removes the
    /// partial it kept).
    func testAnUnfinishedDownloadOfAFileWhoseContentIsHereIsSettledByResumeAndDoctor() throws {
        try start()
        /// `name` downloaded half-way (killed), then the same bytes put as its new version.
        func stuck(_ name: String) throws -> String {
            let data = try remoteOnlyFile(name, bytes: 6 << 20)
            let killed = try h.run(["cat", "/" + name] + h.pw, env: ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_CRASH_AT": "download-midway"])
            XCTAssertEqual(killed.status, 9, killed.stderr)
            let local = try h.localFile(name, data)
            try h.ok(["put", "--replace", local, "/" + name] + h.pw)
            XCTAssertEqual(try node("/" + name)["contentState"] as? String, "LOCAL")
            XCTAssertEqual(try downloadStates("/" + name), ["interrupted"], "the row the old way: stuck")
            XCTAssertEqual(try partials().count, 1)
            return local
        }

        _ = try stuck("a.bin")
        try h.ok(["transfers", "resume"] + h.pw)
        XCTAssertEqual(try downloadStates("/a.bin"), ["done"])
        try h.ok(["doctor"] + h.pw)
        XCTAssertEqual(try partials(), [], "the settled download's partial is gone")

        let b = try stuck("b.bin")
        let doctor = try h.ok(["doctor"] + h.pw)
        XCTAssertTrue(doctor.out.contains("/b.bin: its download had finished; marked done"), doctor.out)
        XCTAssertEqual(try downloadStates("/b.bin"), ["done"])
        XCTAssertEqual(try partials(), [], "the settled download's partial is gone")
        XCTAssertFalse(try h.ok(["transfers"] + h.pw).out.contains("interrupted"))
        XCTAssertEqual(try h.ok(["cat", "/b.bin"] + h.pw).stdout, try Data(contentsOf: URL(fileURLWithPath: b)))
    }
}
