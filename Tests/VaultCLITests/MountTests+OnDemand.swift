import Foundation
import VaultTestSupport
import XCTest

/// On-demand content through the mount (issue 19, docs/mount.md "Reading"): a file not on this
/// device is fetched by segment ranges into the sealed sparse partial, each segment only served
/// once it authenticates; sequential reads complete it into the ordinary cached blob; offline is
/// EIO with the reason logged; a killed mount's segments are reused.
extension MountTests {
    static let segment = 65_536, stride = 65_536 + 16, headerSize = 112

    /// Sealed bytes the server sent for content GETs, from its request log, after `mark` lines.
    func contentBytesServed(_ server: ServerHarness, after mark: Int) -> Int {
        server.log.split(separator: "\n").dropFirst(mark).filter { $0.contains("/content") && $0.contains("\"method\":\"GET\"") }
            .reduce(0) { total, line in
                guard let r = line.range(of: "\"bytesOut\":") else { return total }
                return total + (Int(line[r.upperBound...].prefix { $0.isNumber }) ?? 0)
            }
    }

    func logLines(_ server: ServerHarness) -> Int { server.log.split(separator: "\n").count }

    /// Content GETs the server answered, after `mark` log lines.
    func contentRequests(_ server: ServerHarness, after mark: Int) -> Int {
        server.log.split(separator: "\n").dropFirst(mark).filter { $0.contains("/content") && $0.contains("\"method\":\"GET\"") }.count
    }

    /// The present-segment record of the only sparse partial in tmp/: (present, segments).
    func segmentMap() throws -> (present: Int, count: Int)? {
        let tmp = h.home.appendingPathComponent("tmp")
        guard let name = try FileManager.default.contentsOfDirectory(atPath: tmp.path).first(where: { $0.hasSuffix(".segments") }) else { return nil }
        let bytes = [UInt8](try Data(contentsOf: tmp.appendingPathComponent(name)))
        XCTAssertEqual(Array(bytes[0..<8]), Array("VAULTSPM".utf8))
        let states = bytes[40...]
        return (states.filter { $0 == 1 }.count, states.count)
    }

    /// A synced file of `size` bytes evicted from this device (NOT_DOWNLOADED, on the server).
    func remoteFile(_ server: ServerHarness, _ name: String, size: Int) throws -> Data {
        try h.login(to: server)
        let data = bytes(size, seed: 3)
        try h.ok(["put", try h.localFile(name, data), "/" + name] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/" + name] + h.pw)
        XCTAssertEqual(try h.node("/" + name)["contentState"] as? String, "NOT_DOWNLOADED")
        return data
    }

    func testA4KiBReadInTheMiddleOfANotDownloadedFileFetchesAboutOneSegment() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        try h.login(to: server)
        let data = bytes(4 << 20, seed: 5)
        try h.ok(["put", try h.localFile("big.bin", data), "/big.bin"] + h.pw)
        try h.ok(["sync"] + h.pw)
        // Device B: joined and pulled, the content not downloaded; it mounts.
        let b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        try b.ok(["sync"] + b.pw)
        XCTAssertEqual(try b.node("/big.bin")["contentState"] as? String, "NOT_DOWNLOADED")
        let a = h!
        defer { withExtendedLifetime(a) {} }   // the mountpoint is in its folder
        h = b
        let mark = logLines(server)
        try mount()
        let offset = 2 << 20 + 12_345
        let r = try py("""
            import os, sys
            fd = os.open(sys.argv[1] + '/big.bin', os.O_RDONLY)
            sys.stdout.write(os.pread(fd, 4096, \(offset)).hex())
            """)
        XCTAssertTrue(r == data[offset..<offset + 4096].map { String(format: "%02x", $0) }.joined(), "the bytes read are the file's")
        let served = contentBytesServed(server, after: mark)
        XCTAssertGreaterThan(served, Self.stride)
        XCTAssertLessThanOrEqual(served, 4 * Self.stride, "a 4 KiB read fetched \(served) bytes")   // the kernel may read ahead a little
        let map = try XCTUnwrap(try segmentMap())
        XCTAssertEqual(map.count, (4 << 20) / Self.segment)
        XCTAssertGreaterThanOrEqual(map.present, 1)
        XCTAssertLessThanOrEqual(map.present, 4)
        print("on-demand: a 4 KiB read at 2 MiB of a 4 MiB file fetched \(served) bytes (\(map.present) of \(map.count) segments)")
        XCTAssertEqual(try h.node("/big.bin")["contentState"] as? String, "NOT_DOWNLOADED", "a partial is not the content")
    }

    /// A not-downloaded file removed while open (here through the mount) reads on to its end
    /// through the handle, from its partial, and does not come back once every segment is here.
    func testANotDownloadedFileRemovedWhileOpenReadsOnThroughTheHandle() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server, "gone.bin", size: 1 << 20)
        try mount()
        let r = try py("""
            import hashlib, os, sys
            m = sys.argv[1]
            fd = os.open(m + '/gone.bin', os.O_RDONLY)
            first = os.read(fd, 4096)
            os.unlink(m + '/gone.bin')
            rest = b''
            while True:
                b = os.read(fd, 1 << 16)
                if not b: break
                rest += b
            os.close(fd)
            assert not os.path.exists(m + '/gone.bin')
            sys.stdout.write(hashlib.sha256(first + rest).hexdigest())
            """)
        XCTAssertEqual(r, try sha256Hex(data), "the whole content, through the handle, after the removal")
        XCTAssertFalse(try h.ok(["ls", "/"] + h.pw).out.contains("gone.bin"), "removed, and not brought back by the completed partial")
        unmountNow()
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
    }

    func testASequentialReadCompletesTheFileIntoTheCache() throws {
        var server: ServerHarness? = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server!, "seq.bin", size: 3 << 20 + 777)
        let mark = logLines(server!)
        try mount()
        let sha = try h.run(["-c", "sha256sum < '\(mnt)/seq.bin'"], program: "/bin/sh").out.prefix(64)
        XCTAssertEqual(String(sha), try h.run(["-c", "sha256sum < '\(try h.localFile("seq-copy", data))'"], program: "/bin/sh").out.prefix(64).description)
        let served = contentBytesServed(server!, after: mark)
        XCTAssertLessThan(served, data.count + data.count / 10, "each segment fetched about once")
        let requests = contentRequests(server!, after: mark), segments = data.count / Self.segment + 1
        XCTAssertLessThanOrEqual(requests, segments / 5, "sequential reads prefetch: \(requests) requests for \(segments) segments")
        print("on-demand: a sequential read of \(segments) segments took \(requests) range requests, \(served) sealed bytes")
        XCTAssertTrue(waitFor(5) { (try? self.h.node("/seq.bin")["contentState"] as? String) == "LOCAL" })
        unmountNow()
        // The same file as a download: the server's sealed bytes, byte for byte; doctor clean.
        let cached = try XCTUnwrap(try h.blobFiles("cache").first)
        let sealed = try Data(contentsOf: cached)
        let id = try XCTUnwrap(try server!.children()["seq.bin"]?["id"] as? String)
        let remote = try server!.curl("GET", "/v1/files/\(id)/content", headers: ["Range": "bytes=0-\(sealed.count - 1)"])
        XCTAssertEqual(remote.body.prefix(sealed.count), sealed)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path), [], "no partial left")
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
        let storage = try h.ok(["storage", "--json"] + h.pw).json as? [String: Any]
        XCTAssertGreaterThanOrEqual(storage?["cachedBytes"] as? Int ?? 0, data.count, "counted as cached: \(storage ?? [:])")
        server = nil   // offline: the cached content reads
        XCTAssertEqual(try h.ok(["cat", "/seq.bin"] + h.pw).stdout, data)
    }

    func testATamperedSegmentFromTheServerIsAnIOErrorNeverBytes() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server, "t.bin", size: 2 << 20)
        let id = try XCTUnwrap(try server.children()["t.bin"]?["id"] as? String)
        // The server swaps segments 10 and 11 (same length, each a valid segment of the blob).
        let s10 = Self.headerSize + 10 * Self.stride, s11 = s10 + Self.stride, s12 = s11 + Self.stride
        try server.faults(#"{"lie": {"kind": "splice", "fileId": "\#(id)", "ranges": [[0, \#(s10)], [\#(s11), \#(s12)], [\#(s10), \#(s11)], [\#(s12), 100000000]]}}"#)
        try mount()
        let r = try py("""
            import os, sys
            fd = os.open(sys.argv[1] + '/t.bin', os.O_RDONLY)
            ok = os.pread(fd, 4096, 3 * 65536) == bytes.fromhex('\(data[3 * 65536..<3 * 65536 + 4096].map { String(format: "%02x", $0) }.joined())')
            try:
                os.pread(fd, 4096, 10 * 65536 + 100); print(ok, 'read tampered bytes')
            except OSError as e: print(ok, e.errno)
            """)
        XCTAssertEqual(r, "True 5")   // an untouched segment reads; the swapped one is EIO
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("integrity check"), log)
        // With the lie off, the same segment reads (nothing of the bad answer was kept).
        try server.faults("{}")
        XCTAssertTrue(try py("""
            import os, sys
            fd = os.open(sys.argv[1] + '/t.bin', os.O_RDONLY)
            print(os.pread(fd, 4096, 10 * 65536 + 100).hex())
            """) == data[(10 * 65536 + 100)..<(10 * 65536 + 4196)].map { String(format: "%02x", $0) }.joined(), "the segment reads once the server is honest")
    }

    func testOfflineANotDownloadedFileIsAnIOErrorWithTheReasonLogged() throws {
        var server: ServerHarness? = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server!, "remote.bin", size: 1 << 20)
        _ = try remoteFile(server!, "never-opened.bin", size: 100_000)
        try mount()
        // Opened while online (the record is read at open), then the server stops.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = ["-c", """
            import os, sys, time
            fd = os.open(sys.argv[1] + '/remote.bin', os.O_RDONLY)
            print(os.pread(fd, 16, 0).hex(), flush=True)
            sys.stdin.readline()
            t = time.time()
            try: os.pread(fd, 4096, 900000); print('read')
            except OSError as e: print(e.errno, round(time.time() - t))
            """, mnt]
        let out = Pipe(), input = Pipe()
        reader.standardOutput = out
        reader.standardInput = input
        try reader.run()
        defer { if reader.isRunning { reader.terminate() } }
        XCTAssertEqual(String(decoding: out.fileHandleForReading.readData(ofLength: 33), as: UTF8.self),
                       data.prefix(16).map { String(format: "%02x", $0) }.joined() + "\n")
        server = nil
        let started = Date()
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let answer = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(answer.hasPrefix("5 "), answer)   // EIO
        XCTAssertEqual(try py("""
            import os, sys
            print(os.stat(sys.argv[1] + '/never-opened.bin').st_size, end=' ')
            try: open(sys.argv[1] + '/never-opened.bin', 'rb').read(); print('read')
            except OSError as e: print(e.errno)
            """), "100000 5")   // the size is the vault's; the content is EIO, at once
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "bounded well below the stall timeout")
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("the server cannot be reached"), log)
    }

    func testAMountKilledMidFetchLeavesSegmentsTheNextMountReuses() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server, "k.bin", size: 4 << 20)
        try server.faults(#"{"delayMs": 1500}"#)   // each range request answers slowly: the read is mid-way for seconds
        try mount()
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat '\(mnt)/k.bin' > /dev/null"]
        try reader.run()
        defer { if reader.isRunning { reader.terminate() } }
        XCTAssertTrue(waitFor(30) { ((try? self.segmentMap())??.present ?? 0) >= 8 })
        for pid in mountPids() { kill(pid, SIGKILL) }
        XCTAssertTrue(waitFor(5) { self.mountPids().isEmpty })
        reader.waitUntilExit()
        XCTAssertTrue(waitFor(5) { var st = stat(); return stat(self.mnt, &st) != 0 && errno == ENOTCONN })
        let kept = try XCTUnwrap(try segmentMap())
        XCTAssertLessThan(kept.present, kept.count)
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
        XCTAssertEqual(try XCTUnwrap(try segmentMap()).present, kept.present, "doctor keeps the partial")
        // A present segment damaged at rest is fetched again, never served.
        let tmp = h.home.appendingPathComponent("tmp")
        let sparse = tmp.appendingPathComponent(try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: tmp.path).first { $0.hasSuffix(".sparse") }))
        let damage = try FileHandle(forUpdating: sparse)
        try damage.seek(toOffset: UInt64(Self.headerSize + 100))   // inside segment 0, which the cat read first
        let byte = try XCTUnwrap(try damage.read(upToCount: 1))
        try damage.seek(toOffset: UInt64(Self.headerSize + 100))
        try damage.write(contentsOf: Data([byte[0] ^ 0x01]))
        try damage.close()
        try server.faults("{}")
        let mark = logLines(server)
        try mount()
        let read = try Data(contentsOf: URL(fileURLWithPath: mnt + "/k.bin"))
        XCTAssertTrue(read == data, "the whole file reads back")
        let served = contentBytesServed(server, after: mark)
        XCTAssertLessThanOrEqual(served, (kept.count - kept.present + 1) * Self.stride, "the kept segments were not fetched again, but the damaged one")
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertFalse(log.contains("failed"), log)
        XCTAssertTrue(log.contains("fetched \(Self.stride) sealed bytes"), "the damaged segment alone was fetched again: \(log)")
        unmountNow()
        XCTAssertEqual(try h.node("/k.bin")["contentState"] as? String, "LOCAL")
        let after = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(after.status, 0, after.stderr + after.out)
    }
}

extension MountTests {
    func testAServerThatStallsIsAnIOErrorWithinTheStallTimeout() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        h.env["VAULT_SYNC_STALL_SECONDS"] = "2"   // the mount's connection gives up after 2 s without a byte
        _ = try remoteFile(server, "slow.bin", size: 1 << 20)
        try mount()
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = ["-c", """
            import os, sys, time
            fd = os.open(sys.argv[1] + '/slow.bin', os.O_RDONLY)
            os.pread(fd, 16, 0); print('opened', flush=True)
            sys.stdin.readline()
            t = time.time()
            try: os.pread(fd, 4096, 900000); print('read')
            except OSError as e: print(e.errno, time.time() - t)
            """, mnt]
        let out = Pipe(), input = Pipe()
        reader.standardOutput = out
        reader.standardInput = input
        try reader.run()
        defer { if reader.isRunning { reader.terminate() } }
        XCTAssertEqual(String(decoding: out.fileHandleForReading.readData(ofLength: 7), as: UTF8.self), "opened\n")
        try server.faults(#"{"delayMs": 9000}"#)   // the server accepts, then says nothing for 9 s
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let answer = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        XCTAssertEqual(answer.first, "5", "\(answer)")   // EIO
        let waited = Double(answer.last ?? "") ?? 99
        XCTAssertLessThan(waited, 2 + 10, "bounded by the stall timeout (libcurl averages its speed over a few seconds)")
        print("on-demand: a stalled server gave EIO after \(waited) s")
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("failed:"), log)
        try server.faults("{}")
    }
}

/// A sparse partial offline, and in the content budget (docs/mount.md "Reading").
extension MountTests {
    /// Sparse partials in the vault's tmp folder.
    func partials() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path)) ?? []).filter { $0.hasSuffix(".sparse") }
    }

    /// Partials a process holds open (their shared `flock`), as the content budget sees them.
    func partialsInUse() -> Int {
        partials().filter { name in
            let fd = open(h.home.appendingPathComponent("tmp/" + name).path, O_RDONLY)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return flock(fd, LOCK_EX | LOCK_NB) != 0
        }.count
    }

    /// A python reader of `name` through the mount: reads `count` bytes at `offset` sequentially,
    /// prints their SHA-256, and holds the file open until its stdin gets a line.
    func holdingReader(_ name: String, offset: Int, count: Int) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", """
            import hashlib, os, sys
            fd = os.open(sys.argv[1] + '/\(name)', os.O_RDONLY)
            h, at = hashlib.sha256(), \(offset)
            while at < \(offset + count):
                b = os.pread(fd, min(65536, \(offset + count) - at), at); h.update(b); at += len(b)
            print(h.hexdigest(), flush=True)
            sys.stdin.readline()
            """, mnt]
        let out = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardInput = input
        try p.run()
        return (p, out, input)
    }

    func sha256Hex(_ d: Data) throws -> String {
        String(try h.run(["-c", "sha256sum < '\(try h.localFile("sha-\(d.count)-\(d.first ?? 0)", d))'"], program: "/bin/sh").out.prefix(64))
    }

    func testOfflineAPartialServesTheSegmentsItHoldsAndAMissingOneIsEIOAtOnce() throws {
        var server: ServerHarness? = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server!, "part.bin", size: 4 << 20)
        try mount()
        try py("import os, sys; fd = os.open(sys.argv[1] + '/part.bin', os.O_RDONLY); os.pread(fd, 4096, 0)")
        unmountNow()
        let kept = try XCTUnwrap(try segmentMap())
        XCTAssertGreaterThan(kept.present, 0)
        XCTAssertLessThan(kept.present, kept.count / 2)
        server = nil   // offline from now on
        try mount()
        let started = Date()
        let r = try py("""
            import os, sys
            fd = os.open(sys.argv[1] + '/part.bin', os.O_RDONLY)
            sys.stdout.write(os.pread(fd, 4096, 0).hex() + ' ')
            try: os.pread(fd, 4096, \((4 << 20) - 70_000)); print('read')
            except OSError as e: print(e.errno)
            """)
        XCTAssertTrue(r == data.prefix(4096).map { String(format: "%02x", $0) }.joined() + " 5", "the kept segment reads, the missing one is EIO: \(r.suffix(8))")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "at once, not after a stall")
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("the server cannot be reached"), log)
        XCTAssertEqual(try h.node("/part.bin")["contentState"] as? String, "NOT_DOWNLOADED")
    }

    func testPartialsCountInTheContentBudgetAndAnOpenFilesIsNeverDropped() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        let r1 = try remoteFile(server, "r1.bin", size: 4 << 20)
        let r2 = try remoteFile(server, "r2.bin", size: 4 << 20)
        try h.ok(["put", try h.localFile("cached.bin", bytes(1 << 20)), "/cached.bin"] + h.pw)
        try h.ok(["sync"] + h.pw)
        XCTAssertEqual(try h.node("/cached.bin")["contentState"] as? String, "LOCAL")
        try h.ok(["storage", "--budget", "2M"] + h.pw)
        try mount()
        // r1 held open with 1.5 MiB of it here: with the 1 MiB cached file that is over the
        // budget, and the cached file (least recently used, not open) goes.
        let (p1, out1, in1) = try holdingReader("r1.bin", offset: 0, count: 3 << 19)
        defer { if p1.isRunning { p1.terminate() } }
        XCTAssertEqual(String(decoding: out1.fileHandleForReading.readData(ofLength: 65), as: UTF8.self), try sha256Hex(r1.prefix(3 << 19)) + "\n")
        XCTAssertEqual(try h.node("/cached.bin")["contentState"] as? String, "NOT_DOWNLOADED", "evicted for the partial")
        // r2 read while r1 is open: r1's partial stays (open), the budget is exceeded and says so.
        let (p2, out2, in2) = try holdingReader("r2.bin", offset: 0, count: 3 << 19)
        defer { if p2.isRunning { p2.terminate() } }
        XCTAssertEqual(String(decoding: out2.fileHandleForReading.readData(ofLength: 65), as: UTF8.self), try sha256Hex(r2.prefix(3 << 19)) + "\n")
        XCTAssertEqual(partials().count, 2)
        // Nor does another process's budget drop a partial the mount has open (`vault evict`).
        _ = try h.run(["evict"] + h.pw)
        XCTAssertEqual(partials().count, 2, "the open files' partials stay")
        // r1 closed: the next fetch for r2 (still open) drops r1's partial, never r2's.
        in1.fileHandleForWriting.write(Data("done\n".utf8))
        p1.waitUntilExit()
        in2.fileHandleForWriting.write(Data("done\n".utf8))
        p2.waitUntilExit()
        // Both closed once the mount let go of them (a prefetch under way ends after its run).
        XCTAssertTrue(waitFor(10) { self.partialsInUse() == 0 }, "the mount lets go of closed files' partials")
        XCTAssertEqual(try py("""
            import hashlib, os, sys
            fd = os.open(sys.argv[1] + '/r2.bin', os.O_RDONLY)
            print(hashlib.sha256(os.pread(fd, 65536, (4 << 20) - 65536)).hexdigest())
            """), try sha256Hex(r2.suffix(65536)))   // the last segment: beyond any prefetch so far, so it is fetched
        XCTAssertEqual(partials().count, 1, "r1's partial was dropped: \(partials())")
        let log = try String(contentsOf: h.home.appendingPathComponent("mount.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("the content budget evicted"), log)
        XCTAssertTrue(log.contains("exceeds the content budget"), log)
        unmountNow()
        let doctor = try h.run(["doctor"] + h.pw)
        XCTAssertEqual(doctor.status, 0, doctor.stderr + doctor.out)
    }
}

extension MountTests {
    /// The prefetch runs on a helper thread: a reader slower than the server never waits for
    /// it, though every request to the server takes 1 s (in the loop, each read that started a
    /// prefetch waited that second).
    func testThePrefetchRunsBesideTheReadsItServes() throws {
        let server = try ServerHarness(root: h.root)
        h.useFastRetry()
        let data = try remoteFile(server, "p.bin", size: 2 << 20)
        try mount()
        try server.faults(#"{"delayMs": 1000}"#)
        let r = try py("""
            import hashlib, os, sys, time
            fd = os.open(sys.argv[1] + '/p.bin', os.O_RDONLY)
            h, slowest = hashlib.sha256(), 0.0
            for i in range(32):
                t = time.time()
                h.update(os.pread(fd, 65536, i * 65536))
                if i >= 8: slowest = max(slowest, time.time() - t)
                time.sleep(0.15)
            print(h.hexdigest(), round(slowest, 3))
            """)
        try server.faults("{}")
        let parts = r.split(separator: " ")
        XCTAssertEqual(parts.first.map(String.init), try sha256Hex(data))
        let slowest = Double(parts.last ?? "") ?? 99
        XCTAssertLessThan(slowest, 0.5, "a read past the first ones waited \(slowest) s for a prefetch")
        print("on-demand: with 1 s per range request, the slowest sequential read after the first 8 took \(slowest) s")
        XCTAssertTrue(waitFor(5) { (try? self.h.node("/p.bin")["contentState"] as? String) == "LOCAL" }, "completed by the prefetch, published")
    }
}
