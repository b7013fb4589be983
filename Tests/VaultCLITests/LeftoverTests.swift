import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What a real `kill -9` leaves behind is cleaned up by the next command: sealed partials in
/// `tmp/` (a `put`, `put -r` or `key reencrypt` cut off mid-blob), and the hidden copy of a vault
/// that a killed `backup import` was restoring (which still opens with its old keyslots).
final class LeftoverTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
    }

    var tmpEntries: [String] { (try? FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path)) ?? [] }

    /// Starts `vault args`, waits until `ready(pid)` holds, and kills it with SIGKILL.
    func kill9(_ args: [String], env: [String: String] = [:], when ready: (_ pid: Int32) -> Bool) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        p.arguments = args
        p.environment = h.env.merging(env) { $1 }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        _ = eventually(within: 60) { ready(p.processIdentifier) || !p.isRunning }
        XCTAssertTrue(p.isRunning, "vault \(args[0]) finished before it could be killed")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
    }

    /// Process `pid` holds a file of tmp/ open, at least 1 MiB large: sealing is under way.
    /// (A blob being sealed has no name there: `O_TMPFILE`, shown as `tmp/#… (deleted)`.)
    func sealing(_ pid: Int32) -> Bool {
        let tmp = h.home.appendingPathComponent("tmp").resolvingSymlinksInPath().path + "/"
        let fds = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + fd),
                  target.hasPrefix(tmp) else { return false }
            return (POSIXSize(fds + "/" + fd) ?? 0) > 1 << 20
        }
    }

    func testKilledPutAndReencryptLeaveNoPartialBehind() throws {
        let big = h.root.appendingPathComponent("big").path
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: nil))
        XCTAssertEqual(truncate(big, 1 << 30), 0)   // sparse 1 GiB: sealing it takes a while
        try kill9(["put", big, "/big"] + h.pw, when: sealing)
        XCTAssertEqual(tmpEntries, [], "the blob being sealed had no name: the kill leaves nothing in tmp/")
        // A partial left by an older version (named) is removed by the next command.
        XCTAssertTrue(FileManager.default.createFile(atPath: h.home.appendingPathComponent("tmp/0123456789abcdef0123456789abcdef.partial").path,
                                                     contents: Data(repeating: 1, count: 100)))
        try h.ok(["ls"] + h.pw)
        XCTAssertEqual(tmpEntries, [], "the next command removes a partial left in tmp/")

        // A killed `put -r` leaves neither a partial nor its destination folder.
        let tree = h.root.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: tree.appendingPathComponent("one").path, contents: nil))
        XCTAssertEqual(truncate(tree.appendingPathComponent("one").path, 1 << 30), 0)
        try kill9(["put", "-r", tree.path, "/dest"] + h.pw, when: sealing)
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw).json as? [Any])?.count, 0, "no destination folder")
        XCTAssertEqual(tmpEntries, [])

        // reencrypt, killed while it seals a new copy of a blob.
        let f = try h.localFile("r.bin", Data(repeating: 9, count: 64 << 20))
        try h.ok(["put", f, "/r.bin"] + h.pw)
        try kill9(["key", "reencrypt"] + h.pw, when: sealing)
        try h.ok(["mkdir", "/after"] + h.pw)
        XCTAssertEqual(tmpEntries, [])
        try h.ok(["key", "reencrypt"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/r.bin"] + h.pw).stdout, Data(repeating: 9, count: 64 << 20))
        XCTAssertTrue(try h.ok(["doctor"] + h.pw).out.contains("Everything is consistent"))
    }

    func testKilledBackupImportLeavesNoCopyOfTheVault() throws {
        try h.ok(["put", try h.localFile("b.bin", Data(repeating: 7, count: 48 << 20)), "/b.bin"] + h.pw)
        let bundle = h.root.appendingPathComponent("vault.bundle").path
        let pass = try h.localFile("backup.pass", Data("backup passphrase 1\n".utf8))
        try h.ok(["backup", "export", bundle, "--passphrase-file", pass, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw)

        let parent = h.root.appendingPathComponent("restore")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let target = parent.appendingPathComponent("vault").path
        func importFolders() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []).filter { $0.hasPrefix(".vault.import") }
        }
        let env = ["VAULT_HOME": target]
        try kill9(["backup", "import", bundle, "--passphrase-file", pass], env: env) { _ in
            importFolders().contains { FileManager.default.fileExists(atPath: parent.path + "/" + $0 + "/metadata.db") }
        }
        let left = try XCTUnwrap(importFolders().first, "the kill left no import folder")
        XCTAssertTrue(FileManager.default.fileExists(atPath: parent.path + "/" + left + "/keyslots"), "it holds the old keyslots")

        // One that is still being imported (its claim held) stays; one of an older vault (no claim file) goes.
        let running = parent.appendingPathComponent(".vault.import-running")
        try FileManager.default.createDirectory(at: running, withIntermediateDirectories: true)
        let claim = open(running.appendingPathComponent(".import.lock").path, O_RDWR | O_CREAT, 0o600)
        XCTAssertEqual(flock(claim, LOCK_EX), 0)
        defer { close(claim) }
        let older = parent.appendingPathComponent(".vault.import-0123456789ab")
        try FileManager.default.createDirectory(at: older, withIntermediateDirectories: true)
        try Data("old keyslots".utf8).write(to: older.appendingPathComponent("keyslots"))

        let next = try h.run(["status"], env: env)
        XCTAssertEqual(next.status, 4, "there is no vault at the target yet: \(next.stderr)")
        XCTAssertTrue(next.stderr.contains("removed the leftovers of an interrupted `vault backup import`"), next.stderr)
        XCTAssertEqual(importFolders(), [".vault.import-running"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))

        try h.ok(["backup", "import", bundle, "--passphrase-file", pass], env: env)
        XCTAssertEqual(try h.ok(["cat", "/b.bin"] + h.pw, env: env).stdout, Data(repeating: 7, count: 48 << 20))
    }
}

/// The size of the file at `path`, if it exists.
func POSIXSize(_ path: String) -> UInt64? {
    var st = stat()
    return stat(path, &st) == 0 ? UInt64(st.st_size) : nil
}
