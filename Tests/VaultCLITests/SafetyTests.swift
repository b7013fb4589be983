import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Concurrency, disk space, and no plaintext at rest.
final class SafetyTests: XCTestCase {
    func testSecondCommandWaitsThenFailsClearly() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        // Hold both vault locks as another (ordinary) vault command would.
        let fd = open(h.home.appendingPathComponent("lock").path, O_RDWR)
        let fd2 = open(h.home.appendingPathComponent("lock.transfers").path, O_RDWR | O_CREAT, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        XCTAssertEqual(flock(fd2, LOCK_EX), 0)
        for cmd in [["mkdir", "/x"], ["ls"]] {   // even a reader waits for an ordinary command
            let start = Date()
            let r = try h.run(cmd + h.pw, env: ["VAULT_LOCK_TIMEOUT": "1"])
            XCTAssertEqual(r.status, 7)
            XCTAssertTrue(r.stderr.contains("another vault command"), r.stderr)
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.9, "it waits briefly first")
        }
        flock(fd2, LOCK_UN); close(fd2)
        flock(fd, LOCK_UN); close(fd)
        try h.ok(["ls"] + h.pw)
    }

    func testTwoRealCommandsAtOnceBothSucceedOrOneWaits() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let f = try h.localFile("f", Data(repeating: 1, count: 4 << 20))
        let group = DispatchGroup()
        let statuses = Box([Int32](repeating: -1, count: 4))
        for i in 0..<4 {
            group.enter()
            DispatchQueue.global().async {
                let r = try? h.run(["put", f, "/f\(i)"] + h.pw, env: ["VAULT_LOCK_TIMEOUT": "30"])
                statuses.update { $0[i] = r?.status ?? -2 }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(statuses.get(), [0, 0, 0, 0])
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw).json as? [Any])?.count, 4)
    }

    /// A small real filesystem (tmpfs) where the import cannot fit: refused before writing.
    func testTooLittleFreeSpaceIsRefusedBeforeImport() throws {
        let mnt = FileManager.default.temporaryDirectory.appendingPathComponent("vault-small-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mnt, withIntermediateDirectories: true)
        defer { _ = try? runTool("/bin/umount", [mnt.path]); try? FileManager.default.removeItem(at: mnt) }
        guard getuid() == 0, (try? runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=12m", "tmpfs", mnt.path])) == 0 else {
            throw XCTSkip("needs root and tmpfs mounts")
        }
        let h = try CLIHarness(keyring: false)
        h.env["VAULT_HOME"] = mnt.appendingPathComponent("vault").path
        try h.initVault()
        let big = try h.localFile("big", Data(repeating: 3, count: 6 << 20))
        let r = try h.run(["put", big, "/big"] + h.pw)
        XCTAssertEqual(r.status, 8, r.stderr)
        XCTAssertTrue(r.stderr.contains("not enough free space"), r.stderr)
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw).json as? [Any])?.count, 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: mnt.appendingPathComponent("vault/tmp").path)
            + FileManager.default.contentsOfDirectory(atPath: mnt.appendingPathComponent("vault/staging").path)
        XCTAssertEqual(leftovers, [])
        let small = try h.localFile("small", Data(repeating: 4, count: 1 << 20))
        try h.ok(["put", small, "/small"] + h.pw)
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("consistent"))
    }

    func testNoPlaintextMarkerAtRest() throws {
        let h = try CLIHarness(keyring: CLIHarness.keyringAvailable)
        let marker = "PLAINTEXT-MARKER-\(UUID().uuidString)"
        let xdg = h.root.appendingPathComponent("xdg")
        for d in ["data", "config", "cache"] {
            try FileManager.default.createDirectory(at: xdg.appendingPathComponent(d), withIntermediateDirectories: true)
        }
        h.env["XDG_CONFIG_HOME"] = xdg.appendingPathComponent("config").path
        h.env["XDG_CACHE_HOME"] = xdg.appendingPathComponent("cache").path
        try h.initVault()
        if CLIHarness.keyringAvailable { try h.ok(["unlock"] + h.pw) }
        let content = String(repeating: marker + "\n", count: 20_000)
        let src = try h.localFile("secret.txt", Data(content.utf8))
        try h.ok(["mkdir", "/\(marker)-folder-name-is-metadata"] + h.pw)
        try h.ok(["put", src, "/notes-\(marker).txt"] + h.pw)
        try h.ok(["put", src, "/notes-\(marker).txt", "--replace"] + h.pw)
        try h.ok(["mv", "/notes-\(marker).txt", "/\(marker)-folder-name-is-metadata/"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/\(marker)-folder-name-is-metadata/notes-\(marker).txt"] + h.pw).out, content)
        try h.ok(["pin", "/"] + h.pw)
        try h.ok(["doctor", "--verify"] + h.pw)
        try FileManager.default.removeItem(atPath: src)
        if CLIHarness.keyringAvailable { try h.ok(["lock"]) }
        var scanned = 0
        for dir in [h.home, h.tmp, xdg] {
            let e = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil)
            while let url = e?.nextObject() as? URL {
                guard let data = try? Data(contentsOf: url) else { continue }
                scanned += 1
                XCTAssertNil(data.range(of: Data(marker.utf8)), "marker found in \(url.path)")
                XCTAssertNil(data.range(of: Data("PLAINTEXT-MARKER".utf8)), "marker found in \(url.path)")
            }
        }
        XCTAssertGreaterThan(scanned, 3)
    }

    /// `sqlite3` cannot read the metadata database; `sqlcipher` with the documented raw key can.
    func testDatabaseNeedsSQLCipherAndTheDocumentedKey() throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/sqlite3"), FileManager.default.fileExists(atPath: "/usr/bin/sqlcipher") else {
            throw XCTSkip("needs the sqlite3 and sqlcipher command-line tools (scripts/install-deps.sh)")
        }
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        try h.ok(["mkdir", "/visible-with-key"] + h.pw)
        let db = h.home.appendingPathComponent("metadata.db").path
        let (plainStatus, plainOut) = try runCapture("/usr/bin/sqlite3", [db, "SELECT name FROM nodes;"])
        XCTAssertNotEqual(plainStatus, 0)
        XCTAssertFalse(plainOut.contains("visible-with-key"))
        let key = try DocumentedKeys.databaseKeyHex(vaultHome: h.home.path, password: CLIHarness.password)
        let (st, out) = try runCapture("/usr/bin/sqlcipher", [db], stdin: "PRAGMA key = \"x'\(key)'\";\nSELECT name FROM nodes;\n")
        XCTAssertEqual(st, 0, out)
        XCTAssertTrue(out.contains("visible-with-key"), out)
    }
}

@discardableResult
func runTool(_ exe: String, _ args: [String]) throws -> Int32 {
    try runCapture(exe, args).0
}

func runCapture(_ exe: String, _ args: [String], stdin: String? = nil) throws -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out; p.standardError = out
    let inPipe = Pipe()
    p.standardInput = stdin == nil ? FileHandle.nullDevice : inPipe
    try p.run()
    if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)); try inPipe.fileHandleForWriting.close() }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}
