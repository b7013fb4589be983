import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What `vault` reads from outside: files to import (FIFOs, sockets, devices, links, unreadable
/// files, files that change while read), password sources (pipes, endless commands, long lines)
/// and the bundle of `backup import`. Nothing may hang, hold the vault, or be cut silently.
final class InputTests: XCTestCase {
    /// Every kind of non-regular or unreadable input, as a `put` source, a `put -r` member, a
    /// password file and a backup bundle: a clear error at once, never a hang, and the vault is
    /// free for the next command.
    func testInputsThatAreNotReadableRegularFilesNeverHangOrHoldTheVault() throws {
        guard let noCaps = CLIHarness.withoutFileCapabilities else { throw XCTSkip("needs setpriv to make a file unreadable for root") }
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        var inputs = try h.specialFiles(in: h.root.appendingPathComponent("odd"))
        inputs["folder"] = h.root.appendingPathComponent("odd").path
        inputs["character device"] = "/dev/zero"
        let expected = ["fifo": "FIFO", "socket": "socket", "dangling symlink": "does not exist", "unreadable file": "Permission denied",
                        "folder": "is a folder", "character device": "character device"]
        let fresh = h.root.appendingPathComponent("import-target").path
        for (kind, path) in inputs.sorted(by: { $0.key < $1.key }) {
            let prefix = kind == "unreadable file" ? noCaps : []
            let runs: [(String, [String], [String: String])] = [
                ("put", ["put", path, "/x"] + h.pw, [:]),
                ("password file", ["mkdir", "/never", "--password-file", path], [:]),
                ("backup import", ["backup", "import", path, "--passphrase-file", h.passwordFile.path], ["VAULT_HOME": fresh]),
            ]
            for (role, args, env) in runs {
                let b = try h.runBounded(args, prefix: prefix, env: env)
                XCTAssertFalse(b.timedOut, "\(kind) as \(role) hung")
                XCTAssertNotEqual(b.result.status, 0, "\(kind) as \(role) was accepted")
                XCTAssertFalse(b.result.stderr.contains("internal"), "\(kind) as \(role): \(b.result.stderr)")
                if !(role == "password file" && kind == "fifo") {   // a FIFO nobody writes to reads as empty
                    XCTAssertTrue(b.result.stderr.contains(expected[kind]!), "\(kind) as \(role): \(b.result.stderr)")
                }
                XCTAssertFalse(FileManager.default.fileExists(atPath: fresh), "\(kind) as \(role) created the import target")
                let next = try h.run(["mkdir", "-p", "/free"] + h.pw, env: ["VAULT_LOCK_TIMEOUT": "1"])
                XCTAssertEqual(next.status, 0, "after \(kind) as \(role) the vault is not free: \(next.stderr)")
            }
        }
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw).json as? [[String: Any]])?.map { $0["name"] as? String }, ["free"])

        // The same kinds inside a tree: the regular files are imported, the rest is listed.
        let tree = h.root.appendingPathComponent("tree")
        let members = try h.specialFiles(in: tree)
        try Data("fine".utf8).write(to: tree.appendingPathComponent("ok.txt"))
        symlink("/dev/zero", tree.appendingPathComponent("a-device-link").path)
        let b = try h.runBounded(["put", "-r", tree.path, "/tree"] + h.pw, prefix: noCaps)
        XCTAssertFalse(b.timedOut, "put -r hung")
        XCTAssertEqual(b.result.status, 1, "the unreadable member fails the import: \(b.result.stderr)")
        for (kind, path) in members {
            XCTAssertTrue(b.result.stderr.contains(path), "\(kind) is not reported: \(b.result.stderr)")
        }
        XCTAssertTrue(b.result.stderr.contains("Permission denied"), b.result.stderr)
        XCTAssertEqual((try h.ok(["ls", "/tree", "--json"] + h.pw).json as? [[String: Any]])?.map { $0["name"] as? String }, ["ok.txt"])
        XCTAssertEqual(try h.ok(["cat", "/tree/ok.txt"] + h.pw).out, "fine")
    }

    /// A password source that is slow to deliver is read before the vault is locked: other
    /// commands run meanwhile (`key passwd` and `login` used to ask while holding the vault).
    func testWaitingForAPasswordDoesNotHoldTheVault() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let server = try ServerHarness(root: h.root)
        let fifo = h.root.appendingPathComponent("pw.fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        for (i, args) in [["key", "passwd", "--new-password-file", fifo, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw,
                          ["login", "--server", server.url, "--user", server.user, "--server-password-file", fifo] + h.pw].enumerated() {
            let writer = open(fifo, O_RDWR)   // a writer that has not written yet
            XCTAssertGreaterThanOrEqual(writer, 0)
            let waiting = DispatchGroup()
            let late = Box<CLIHarness.BoundedResult?>(nil)
            let latePid = Box<pid_t>(0)
            waiting.enter()
            DispatchQueue.global().async {
                late.set(try? h.runBounded(args, bound: 30, onStart: { latePid.set($0) }))
                waiting.leave()
            }
            try waitUntil("\(args[0]) to start") { latePid.get() != 0 }
            XCTAssertTrue(CLIHarness.waitUntil(latePid.get(), hasOpen: fifo), "\(args[0]) never opened the password FIFO")
            let meanwhile = try h.run(["mkdir", "/meanwhile-\(i)"] + h.pw, env: ["VAULT_LOCK_TIMEOUT": "1"])
            XCTAssertEqual(meanwhile.status, 0, "the vault was held while \(args[0]) awaited a password: \(meanwhile.stderr)")
            let secret = i == 0 ? CLIHarness.password : server.password
            _ = (secret + "\n").withCString { write(writer, $0, strlen($0)) }
            close(writer)
            waiting.wait()
            XCTAssertEqual(late.get()?.result.status, 0, late.get()?.result.stderr ?? "")
        }
    }

    /// A password piped in pieces (process substitution, a pipe's 4 KiB chunks) is read to its
    /// line ending; a longer line than the cap is refused, never cut.
    func testPasswordLinesAreReadWholeAndLongOnesRefused() throws {
        let h = try CLIHarness(keyring: false)
        let long = String(repeating: "pässwörd-", count: 600)   // 6,600 bytes: two pipe chunks and more
        let whole = try h.localFile("long.pw", Data((long + "\n").utf8))
        let halfA = String(long.prefix(2000)), halfB = String(long.dropFirst(2000))
        // init reads it from a pipe that delivers the line in two writes.
        let script = "printf '%s' '\(halfA)'; sleep 0.3; printf '%s\\n' '\(halfB)'"
        let r = try runCapture("/bin/bash", ["-c", "'\(CLIHarness.vaultBinary)' init --kdf-ops 1 --kdf-mem 8M --password-file <(\(script))"],
                               env: h.env)
        XCTAssertEqual(r.0, 0, r.1)
        try h.ok(["mkdir", "/whole", "--password-file", whole])
        let prefixOnly = try h.localFile("prefix.pw", Data((halfA + "\n").utf8))
        XCTAssertEqual(try h.run(["ls", "--password-file", prefixOnly]).status, 3, "the first chunk alone must not open it")

        let h2 = try CLIHarness(keyring: false)
        let tooLong = try h2.localFile("too-long.pw", Data((String(repeating: "x", count: 65_537) + "\n").utf8))
        let refused = try h2.run(["init", "--kdf-ops", "1", "--kdf-mem", "8M", "--password-file", tooLong])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("longer than 65536 bytes"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: h2.home.appendingPathComponent("keyslots").path))
        let atCap = try h2.localFile("cap.pw", Data((String(repeating: "x", count: 65_536) + "\r\n").utf8))
        try h2.ok(["init", "--kdf-ops", "1", "--kdf-mem", "8M", "--password-file", atCap])
        try h2.ok(["ls", "--password-file", atCap])
    }

    /// `VAULT_PASSWORD_COMMAND` is read to its first line ending and no further; the command (and
    /// whatever it started) is ended; an endless line is refused at the cap.
    func testPasswordCommandStopsAtItsFirstLine() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let pidFile = h.root.appendingPathComponent("cmd.pid").path
        func gone(_ what: String) throws {
            let pid = try XCTUnwrap(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            XCTAssertTrue(CLIHarness.processGone(pid), "\(what): the command's process \(pid) is still running")
        }
        // Under a memory limit: a vault that read to EOF (the old behaviour) must fail, not eat the machine.
        let capped = ["/usr/bin/prlimit", "--as=\(4 << 30)"]
        let endless = try h.runBounded(["mkdir", "/a"], prefix: capped, env: ["VAULT_PASSWORD_COMMAND": "echo $$ > '\(pidFile)'; exec yes '\(CLIHarness.password)'"])
        XCTAssertFalse(endless.timedOut)
        XCTAssertEqual(endless.result.status, 0, endless.result.stderr)
        try gone("yes")
        let lingering = try h.runBounded(["mkdir", "/b"], env: ["VAULT_PASSWORD_COMMAND": "sleep 600 & echo $! > '\(pidFile)'; echo '\(CLIHarness.password)'; wait"])
        XCTAssertEqual(lingering.result.status, 0, lingering.result.stderr)
        try gone("the command's child")
        let noNewline = try h.runBounded(["mkdir", "/c"], prefix: capped, env: ["VAULT_PASSWORD_COMMAND": "echo $$ > '\(pidFile)'; exec tr -d '\\n' < /dev/zero"])
        XCTAssertFalse(noNewline.timedOut)
        XCTAssertEqual(noNewline.result.status, 2)
        XCTAssertTrue(noNewline.result.stderr.contains("longer than 65536 bytes"), noNewline.result.stderr)
        try gone("tr")
        XCTAssertEqual(try h.run(["mkdir", "/d"], env: ["VAULT_PASSWORD_COMMAND": "echo '\(CLIHarness.password)'; exit 3"]).status, 2,
                       "a command that fails after its line is a failure")
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw).json as? [Any])?.count, 2)
    }

    /// A file that grows or shrinks while `put` reads it is refused ("changed while reading", as
    /// tar says) and nothing is stored. The change is made once `put` has the file open.
    func testFileChangedWhileReadingIsNotStored() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        for (what, newSize) in [("grows", 768 << 20), ("shrinks", 256 << 20)] {
            let f = h.root.appendingPathComponent("moving-\(what)").path
            XCTAssertTrue(FileManager.default.createFile(atPath: f, contents: nil))
            XCTAssertEqual(truncate(f, 512 << 20), 0)   // sparse: takes no disk, still read byte by byte
            let b = try h.runBounded(["put", f, "/moving-\(what)"] + h.pw, onStart: { pid in
                XCTAssertTrue(CLIHarness.waitUntil(pid, hasOpen: f), "put never opened the file")
                XCTAssertEqual(truncate(f, off_t(newSize)), 0)
            })
            XCTAssertEqual(b.result.status, 5, "a file that \(what) must be refused: \(b.result.stderr)")
            XCTAssertTrue(b.result.stderr.contains("changed while reading"), b.result.stderr)
            unlink(f)
        }
        XCTAssertEqual((try h.ok(["ls", "--json"] + h.pw).json as? [Any])?.count, 0)
        XCTAssertEqual(try h.blobFiles("staging").count, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.home.appendingPathComponent("tmp").path), [])
    }

    /// Local names that are not UTF-8: a single `put` says so (exit 5); inside `put -r` the rest
    /// is imported and the name reported (exit 5). No Foundation error, no "does not exist".
    func testNamesThatAreNotUTF8() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let tree = h.root.appendingPathComponent("latin1")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        try Data("ok".utf8).write(to: tree.appendingPathComponent("good.txt"))
        func cPath(_ bytes: [UInt8]) -> [CChar] { (Array(tree.path.utf8) + bytes + [0]).map { CChar(bitPattern: $0) } }
        let fd = open(cPath(Array("/caf".utf8) + [0xE9] + Array(".txt".utf8)), O_WRONLY | O_CREAT, 0o600)   // Latin-1 "café.txt"
        XCTAssertGreaterThanOrEqual(fd, 0); _ = write(fd, "x", 1); close(fd)
        XCTAssertEqual(mkdir(cPath(Array("/dir".utf8) + [0xFF]), 0o700), 0)

        let one = try runCapture("/bin/sh", ["-c", "exec \"$0\" put \"$(printf '\(tree.path)/caf\\351.txt')\" --password-file \"$1\"",
                                            CLIHarness.vaultBinary, h.passwordFile.path], env: h.env)
        XCTAssertEqual(one.0, 5, one.1)
        XCTAssertTrue(one.1.contains("caf\\xe9.txt") && one.1.contains("not valid UTF-8"), one.1)
        XCTAssertFalse(one.1.contains("does not exist"), one.1)

        let r = try h.run(["put", "-r", tree.path, "/imported"] + h.pw)
        XCTAssertEqual(r.status, 5, r.stderr)
        XCTAssertTrue(r.stderr.contains("caf\\xe9.txt") && r.stderr.contains("dir\\xff"), r.stderr)
        XCTAssertTrue(r.stderr.contains("not valid UTF-8"), r.stderr)
        XCTAssertEqual((try h.ok(["ls", "/imported", "--json"] + h.pw).json as? [[String: Any]])?.map { $0["name"] as? String }, ["good.txt"])

        let json = try h.run(["put", "-r", tree.path, "/again", "--json"] + h.pw)
        XCTAssertEqual(json.status, 5)
        let result = try XCTUnwrap(json.json as? [String: Any], "one JSON document: \(json.out)")
        let skipped = try XCTUnwrap(result["skipped"] as? [[String: Any]])
        XCTAssertEqual(skipped.compactMap { $0["failure"] as? String }, ["invalidName", "invalidName"])
    }

    /// Control characters and escape sequences in names never reach the terminal raw: `ls`, `ls
    /// -l`, `tree` and messages show them escaped; `--json` keeps the exact name.
    func testControlCharactersInNamesAreEscaped() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let evil = "red\u{1b}[31mtext\u{7}\rback\nline\u{9b}2J\u{202e}txt"
        let f = try h.localFile("plain", Data("x".utf8))
        let stored = try h.ok(["put", f, "/" + evil] + h.pw)
        try h.ok(["mkdir", "/dir\u{1b}]0;title\u{7}"] + h.pw)
        let shown = "red\\x1b[31mtext\\x07\\rback\\nline\\u{9b}2J\\u{202e}txt"
        for out in [stored.out, try h.ok(["ls"] + h.pw).out, try h.ok(["ls", "-l"] + h.pw).out, try h.ok(["tree"] + h.pw).out,
                    try h.run(["rm", "/" + evil + "-missing"] + h.pw).stderr] {
            for raw: UInt8 in [0x1b, 0x07, 0x0d] { XCTAssertFalse(out.utf8.contains(raw), "a raw control byte \(raw) in: \(out.debugDescription)") }
            XCTAssertFalse(out.contains("\u{9b}") || out.contains("\u{202e}"), out.debugDescription)
            XCTAssertTrue(out.contains(shown) || out.contains("dir\\x1b]0;title\\x07"), out.debugDescription)
        }
        let listing = try h.ok(["ls"] + h.pw).out
        XCTAssertEqual(listing.split(separator: "\n").count, 2, "a line feed in a name makes no extra line: \(listing.debugDescription)")
        let json = try h.ok(["ls", "--json"] + h.pw)
        for raw: [UInt8] in [[0x1b], [0x07], [0x0d], [0xc2, 0x9b], [0xe2, 0x80, 0xae]] {
            XCTAssertNil(json.stdout.range(of: Data(raw)), "JSON output holds a raw \(raw)")
        }
        XCTAssertTrue(json.out.contains("\\u009b") && json.out.contains("\\u202e"), json.out)
        let names = try XCTUnwrap(json.json as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(Set(names), [evil, "dir\u{1b}]0;title\u{7}"], "JSON keeps names exact")
    }
}

extension InputTests {
    /// `runCapture` with an environment.
    func runCapture(_ exe: String, _ args: [String], env: [String: String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = env
        let out = Pipe()
        p.standardOutput = out; p.standardError = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
