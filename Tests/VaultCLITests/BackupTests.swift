import Foundation
import XCTest
import VaultTestSupport

/// Backup exclusion (markers, status, and what real tar, restic and borg then leave out) and
/// portable backup bundles (round trips, wrong secrets, tampering, truncation), through the binary.
final class BackupTests: XCTestCase {
    var h: CLIHarness!
    /// A throwaway home folder: the vault lives in home/.local/share/vault beside other files.
    var homeDir: URL!
    var vaultDir: URL { homeDir.appendingPathComponent(".local/share/vault") }
    let signature = "Signature: 8a477f597d28d172789f06886806bc55"

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        homeDir = h.root.appendingPathComponent("home")
        h.env["VAULT_HOME"] = vaultDir.path
        try h.initVault(extra: ["--no-backup-exclusion"])   // each test applies its own scope
    }

    @discardableResult
    func v(_ args: String...) throws -> CLIHarness.Result { try h.ok(args) }

    func status() throws -> [String: Any] {
        try XCTUnwrap(try v("backup-exclusion", "status", "--json").json as? [String: Any])
    }

    /// marker name → state, for location `name` (`cache` or `vault`).
    func markers(_ report: [String: Any], _ name: String) throws -> [String: String] {
        let locs = try XCTUnwrap(report["locations"] as? [[String: Any]])
        let loc = try XCTUnwrap(locs.first { $0["name"] as? String == name })
        var out: [String: String] = [:]
        for m in try XCTUnwrap(loc["markers"] as? [[String: Any]]) { out[m["marker"] as! String] = m["state"] as? String }
        return out
    }

    func putFile(_ name: String, size: Int) throws -> Data {
        let d = TestData.data(size, for: self.name)
        try h.ok(["put", try h.localFile(name, d), "/" + name] + h.pw)
        return d
    }

    /// A vault restored from a bundle is another device: it gets its own device id (two live
    /// devices must never look like one to the server) and drops the exported token.
    func testImportedVaultIsANewDevice() throws {
        let server = try ServerHarness(root: h.root)
        server.decoder = ServerDecoder(home: vaultDir)   // this test's VAULT_HOME
        try h.login(to: server)
        _ = try putFile("one", size: 1000)
        try h.ok(["sync"] + h.pw)
        let bundle = h.root.appendingPathComponent("dev.bundle").path
        let pass = try h.localFile("dev.pass", Data("backup passphrase 1\n".utf8))
        try h.ok(["backup", "export", bundle, "--passphrase-file", pass, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw)
        let restored = ["VAULT_HOME": h.root.appendingPathComponent("restored").path]
        try h.ok(["backup", "import", bundle, "--passphrase-file", pass], env: restored)
        try h.ok(["put", try h.localFile("two", Data("2".utf8)), "/two"] + h.pw, env: restored)
        try h.ok(["sync"] + h.pw, env: restored)
        _ = try putFile("three", size: 10)
        try h.ok(["sync"] + h.pw)
        func device(_ name: String) throws -> String {
            let id = try XCTUnwrap(try server.children()[name]?["id"] as? String, "\(name) is not on the server")
            let list = try server.curl("GET", "/v1/files/\(id)/revisions").json["revisions"] as? [[String: Any]]
            return try XCTUnwrap(list?.first?["deviceId"] as? String, "no device id on \(name)")
        }
        XCTAssertEqual(try device("one"), try device("three"), "the original keeps its device id")
        XCTAssertNotEqual(try device("two"), try device("one"), "the restored vault uploads as a device of its own")
    }

    // MARK: Markers and status

    func testInitAppliesCacheScopeByDefault() throws {
        let other = try CLIHarness(keyring: false)
        try other.initVault()
        let st = try XCTUnwrap(try other.ok(["backup-exclusion", "status", "--json"]).json as? [String: Any])
        XCTAssertEqual(st["scope"] as? String, "cache")
        XCTAssertTrue(FileManager.default.fileExists(atPath: other.home.appendingPathComponent("cache/CACHEDIR.TAG").path))
    }

    func testCacheScopeApplyIsIdempotentStatusAndRemove() throws {
        XCTAssertEqual(try status()["scope"] as? String, "none")
        let applied = try XCTUnwrap(try v("backup-exclusion", "apply", "--json").json as? [String: Any])
        XCTAssertEqual(applied["scope"] as? String, "cache")
        let cache = try markers(applied, "cache")
        XCTAssertEqual(cache["CACHEDIR.TAG"], "present")
        XCTAssertTrue(["present", "unsupported"].contains(cache["user.xdg.robots.backup"]), "\(cache)")
        XCTAssertTrue(["present", "unsupported"].contains(cache["nodump"]), "\(cache)")
        XCTAssertEqual(try markers(applied, "vault")["CACHEDIR.TAG"], "absent")
        XCTAssertEqual((applied["warnings"] as? [Any])?.count, 0, "the cache scope restores everything: no warning")

        // The tag is valid per the spec: the exact 43-byte signature first, then a comment line.
        let tagURL = vaultDir.appendingPathComponent("cache/CACHEDIR.TAG")
        let tag = try String(contentsOf: tagURL, encoding: .utf8)
        XCTAssertTrue(tag.hasPrefix(signature + "\n# "), tag)
        let mode = try FileManager.default.attributesOfItem(atPath: tagURL.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        // Checked independently of vault's own report, where the tools exist.
        if cache["user.xdg.robots.backup"] == "present", FileManager.default.isExecutableFile(atPath: "/usr/bin/getfattr") {
            let (_, out) = try runCapture("/usr/bin/getfattr", ["--absolute-names", "-n", "user.xdg.robots.backup", "--only-values", vaultDir.appendingPathComponent("cache").path])
            XCTAssertEqual(out, "false")
        }
        if cache["nodump"] == "present", FileManager.default.isExecutableFile(atPath: "/usr/bin/lsattr") {
            let (_, out) = try runCapture("/usr/bin/lsattr", ["-d", vaultDir.appendingPathComponent("cache").path])
            XCTAssertTrue(out.split(separator: " ")[0].contains("d"), out)
        }

        // Idempotent: same report, tag untouched.
        let before = try FileManager.default.attributesOfItem(atPath: tagURL.path)[.modificationDate] as? Date
        let again = try XCTUnwrap(try v("backup-exclusion", "apply", "--json").json as? [String: Any])
        XCTAssertEqual(try markers(again, "cache"), cache)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: tagURL.path)[.modificationDate] as? Date, before)

        // Text status names each marker and the tools that honour it, truthfully.
        let text = try v("backup-exclusion", "status").out
        XCTAssertTrue(text.contains("Left out of backups: the content cache"), text)
        XCTAssertTrue(text.contains("tar --exclude-caches") && text.contains("restic backup --exclude-caches")
                      && text.contains("borg create --exclude-caches") && text.contains("borg create --exclude-nodump"), text)
        XCTAssertTrue(text.contains("no common backup tool reads it today"), text)
        let json = try status()
        let xattrTools = try XCTUnwrap((json["locations"] as? [[String: Any]])?.first?["markers"] as? [[String: Any]])
            .first { $0["marker"] as? String == "user.xdg.robots.backup" }?["honouredBy"] as? [String]
        XCTAssertEqual(xattrTools, [])

        let removed = try XCTUnwrap(try v("backup-exclusion", "remove", "--json").json as? [String: Any])
        XCTAssertEqual(removed["scope"] as? String, "none")
        XCTAssertEqual(Set(try markers(removed, "cache").values).subtracting(["unsupported"]), ["absent"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: tagURL.path))
        try v("backup-exclusion", "remove")   // removing twice is fine
    }

    func testAllScopeWarnsPlainlyAndNarrowsBack() throws {
        _ = try putFile("unsynced.bin", size: 1000)
        let r = try h.ok(["backup-exclusion", "apply", "--all"])
        XCTAssertTrue(r.out.contains("Left out of backups: the whole vault folder"), r.out)
        XCTAssertTrue(r.stderr.contains("1 file(s) in staging are not on the server yet"), r.stderr)
        XCTAssertTrue(r.stderr.contains("no longer holds the vault itself"), r.stderr)
        XCTAssertTrue(r.stderr.contains("NO recovery or escrow key slot"), r.stderr)
        let s = try status()
        XCTAssertEqual(s["scope"] as? String, "all")
        XCTAssertEqual(try markers(s, "vault")["CACHEDIR.TAG"], "present")
        XCTAssertEqual(try markers(s, "cache")["CACHEDIR.TAG"], "present")
        XCTAssertEqual((s["warnings"] as? [String])?.count, 2)
        XCTAssertTrue(try String(contentsOf: vaultDir.appendingPathComponent("CACHEDIR.TAG"), encoding: .utf8).hasPrefix(signature + "\n#"))

        // With a recovery key the warning no longer says there is none.
        try h.ok(["key", "add-recovery", "--json"] + h.pw)
        let st = try h.ok(["backup-exclusion", "status"])
        XCTAssertFalse(st.stderr.contains("NO recovery"), st.stderr)
        XCTAssertTrue(st.stderr.contains("no longer holds the vault itself"), st.stderr)

        // apply without --all narrows to the cache: exactly the asked scope.
        let n = try h.ok(["backup-exclusion", "apply"])
        XCTAssertTrue(n.stderr.contains("narrowed"), n.stderr)
        XCTAssertEqual(try status()["scope"] as? String, "cache")
        XCTAssertFalse(FileManager.default.fileExists(atPath: vaultDir.appendingPathComponent("CACHEDIR.TAG").path))
        try v("backup-exclusion", "remove")
        XCTAssertEqual(try status()["scope"] as? String, "none")
    }

    func testExclusionWithoutVaultIsAClearError() throws {
        let r = try h.run(["backup-exclusion", "status"], env: ["VAULT_HOME": h.root.appendingPathComponent("nothing").path])
        XCTAssertEqual(r.status, 4, r.stderr)
        XCTAssertTrue(r.stderr.contains("vault init"), r.stderr)
        XCTAssertEqual(try h.run(["backup-exclusion", "frobnicate"]).status, 2)
    }

    // MARK: Real backup tools over a home folder

    /// A home with a vault (a staged blob, a cache blob, keyslots, database) and other files.
    func populateHome() throws {
        _ = try putFile("staged.bin", size: 5000)
        // Content reaches the cache once uploaded; with no server here, copy a sealed blob there
        // (the backup tools only see files; nothing reads it).
        let staged = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: vaultDir.appendingPathComponent("staging").path).first)
        try FileManager.default.copyItem(at: vaultDir.appendingPathComponent("staging/" + staged),
                                         to: vaultDir.appendingPathComponent("cache/0123456789abcdef0123456789abcdef.blob"))
        for (p, text) in [("Documents/report.txt", "report"), (".config/app/settings.ini", "x=1"), (".local/share/other/data.txt", "keep me")] {
            let url = homeDir.appendingPathComponent(p)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
    }

    /// Paths relative to the home folder, as the tool listed them.
    func normalise(_ lines: [String]) -> Set<String> {
        var out = Set<String>()
        for var l in lines where !l.isEmpty {
            if let r = l.range(of: "home/") { l = String(l[r.upperBound...]) } else if l.hasSuffix("home") || l == "./" || l == "." { continue }
            if l.hasPrefix("./") { l.removeFirst(2) }
            while l.hasSuffix("/") { l.removeLast() }
            if !l.isEmpty { out.insert(l) }
        }
        return out
    }

    let others = ["Documents/report.txt", ".config/app/settings.ini", ".local/share/other/data.txt"]
    /// The vault folder, relative to the home folder.
    let vp = ".local/share/vault/"

    /// The default scope: cache blobs left out; staging, database, keyslots and other files kept.
    func assertCacheScope(_ listed: Set<String>, _ tool: String, file: StaticString = #filePath, line: UInt = #line) {
        for o in others { XCTAssertTrue(listed.contains(o), "\(tool) lost \(o): \(listed.sorted())", file: file, line: line) }
        for k in [vp + "keyslots", vp + "metadata.db"] { XCTAssertTrue(listed.contains(k), "\(tool) lost \(k)", file: file, line: line) }
        XCTAssertTrue(listed.contains { $0.hasPrefix(vp + "staging/") && $0.hasSuffix(".blob") }, "\(tool) lost the staged blob: \(listed.sorted())", file: file, line: line)
        XCTAssertFalse(listed.contains { $0.hasPrefix(vp + "cache/") && $0.hasSuffix(".blob") }, "\(tool) kept cache content: \(listed.sorted())", file: file, line: line)
    }

    /// --all: nothing of the vault but (at most) the folder and its tag; every other file kept.
    func assertAllScope(_ listed: Set<String>, _ tool: String, file: StaticString = #filePath, line: UInt = #line) {
        for o in others { XCTAssertTrue(listed.contains(o), "\(tool) lost \(o): \(listed.sorted())", file: file, line: line) }
        let vaultItems = listed.filter { $0.hasPrefix(vp) }
        XCTAssertTrue(vaultItems.isSubset(of: [vp + "CACHEDIR.TAG"]), "\(tool) kept vault data: \(vaultItems.sorted())", file: file, line: line)
    }

    func tool(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func runListing(_ exe: String, _ args: [String], env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
        p.currentDirectoryURL = h.root
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let errBox = Box<Data>(Data())
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errBox.set(err.fileHandleForReading.readDataToEndOfFile()); group.leave() }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "\(exe) \(args.joined(separator: " ")): \(String(decoding: errBox.get(), as: UTF8.self))", file: file, line: line)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func tarList(_ option: String) throws -> Set<String> {
        let archive = h.tmp.appendingPathComponent("home-\(UUID().uuidString).tar").path
        _ = try runListing("/usr/bin/tar", ["-cf", archive, option, "-C", homeDir.path, "."])
        return normalise(try runListing("/usr/bin/tar", ["-tf", archive]))
    }

    func testTarLeavesOutWhatEachScopeCovers() throws {
        guard tool("tar") != nil else { throw XCTSkip("tar is not installed (apt-get install tar)") }
        try populateHome()
        // Without markers, tar keeps everything (the control).
        let control = try tarList("--exclude-caches")
        XCTAssertTrue(control.contains { $0.hasPrefix(vp + "cache/") && $0.hasSuffix(".blob") })
        try v("backup-exclusion", "apply")
        for option in ["--exclude-caches", "--exclude-caches-under", "--exclude-caches-all"] {
            assertCacheScope(try tarList(option), "tar \(option)")
        }
        try v("backup-exclusion", "apply", "--all")
        for option in ["--exclude-caches", "--exclude-caches-under", "--exclude-caches-all"] {
            assertAllScope(try tarList(option), "tar \(option)")
        }
        XCTAssertFalse(try tarList("--exclude-caches-all").contains { $0.hasPrefix(vp) }, "--exclude-caches-all drops the folder itself")
    }

    func testResticLeavesOutWhatEachScopeCovers() throws {
        guard let restic = tool("restic") else { throw XCTSkip("restic is not installed: scripts/install-deps.sh installs the Debian package restic") }
        try populateHome()
        let env = ["RESTIC_PASSWORD": "test-only-repo-password", "RESTIC_CACHE_DIR": h.tmp.appendingPathComponent("restic-cache").path]
        let repo = h.tmp.appendingPathComponent("restic-repo").path
        _ = try runListing(restic, ["init", "--quiet", "--repo", repo], env: env)
        func snapshot() throws -> Set<String> {
            _ = try runListing(restic, ["backup", "--quiet", "--repo", repo, "--exclude-caches", homeDir.path], env: env)
            return normalise(try runListing(restic, ["ls", "--quiet", "--repo", repo, "latest"], env: env))
        }
        // Without markers, restic keeps everything (the control).
        XCTAssertTrue(try snapshot().contains { $0.hasPrefix(vp + "cache/") && $0.hasSuffix(".blob") })
        try v("backup-exclusion", "apply")
        assertCacheScope(try snapshot(), "restic --exclude-caches")
        try v("backup-exclusion", "apply", "--all")
        assertAllScope(try snapshot(), "restic --exclude-caches")
    }

    func testBorgLeavesOutWhatEachScopeCovers() throws {
        guard let borg = tool("borg") else { throw XCTSkip("borg is not installed: scripts/install-deps.sh installs the Debian package borgbackup") }
        try populateHome()
        let env = ["BORG_PASSPHRASE": "", "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
                   "BORG_BASE_DIR": h.tmp.appendingPathComponent("borg-base").path]
        let repo = h.tmp.appendingPathComponent("borg-repo").path
        _ = try runListing(borg, ["init", "--encryption=none", repo], env: env)
        var n = 0
        func archive(_ option: String) throws -> Set<String> {
            n += 1
            _ = try runListing(borg, ["create", option, "\(repo)::a\(n)", homeDir.path], env: env)
            return normalise(try runListing(borg, ["list", "--short", "\(repo)::a\(n)"], env: env))
        }
        try v("backup-exclusion", "apply")
        let s = try status()
        assertCacheScope(try archive("--exclude-caches"), "borg --exclude-caches")
        if try markers(s, "cache")["nodump"] == "present" {
            assertCacheScope(try archive("--exclude-nodump"), "borg --exclude-nodump")
        } else {
            print("skipping borg --exclude-nodump: this filesystem does not support the nodump flag")
        }
        try v("backup-exclusion", "apply", "--all")
        assertAllScope(try archive("--exclude-caches"), "borg --exclude-caches")
        if try markers(try status(), "vault")["nodump"] == "present" {
            assertAllScope(try archive("--exclude-nodump"), "borg --exclude-nodump")
        }
        // After remove, borg keeps the whole vault again.
        try v("backup-exclusion", "remove")
        let all = try archive("--exclude-caches")
        XCTAssertTrue(all.contains { $0.hasPrefix(vp + "cache/") && $0.hasSuffix(".blob") } && all.contains(vp + "keyslots"))
    }

    // MARK: Portable backup bundles

    var kdf: [String] { ["--kdf-ops", "1", "--kdf-mem", "8M"] }

    func passphraseFile(_ text: String = "a long backup passphrase") throws -> String {
        try h.localFile("bp-\(UUID().uuidString)", Data((text + "\n").utf8))
    }

    /// A VAULT_HOME that does not exist yet, in a folder of its own (to check for leftovers).
    func freshHome() throws -> URL {
        let parent = h.root.appendingPathComponent("restore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        return parent.appendingPathComponent("vault")
    }

    func assertNothingPublished(_ target: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "a refused import published \(target.path)", file: file, line: line)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path)
        XCTAssertEqual(leftovers, [], "a refused import left files behind", file: file, line: line)
    }

    /// Several files (multi-segment bundle), exported; returns the bundle path and the contents.
    func exportBundle(_ protection: [String]) throws -> (String, [(String, Data)]) {
        let files = [("/a.bin", try putFile("a.bin", size: 150_000)), ("/b.txt", try putFile("b.txt", size: 10)),
                     ("/empty", try putFile("empty", size: 0))]
        let bundle = h.root.appendingPathComponent("vault-\(UUID().uuidString).bundle").path
        let r = try h.ok(["backup", "export", bundle, "--json"] + protection + kdf + h.pw)
        let j = try XCTUnwrap(r.json as? [String: Any])
        // keyslots, metadata.db, three staged blobs (and unlock-failures after a failed unlock).
        let counter = FileManager.default.fileExists(atPath: vaultDir.appendingPathComponent("unlock-failures").path) ? 1 : 0
        XCTAssertEqual(j["files"] as? Int, 5 + counter)
        let mode = try FileManager.default.attributesOfItem(atPath: bundle)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        // Nothing in it is readable: no plaintext and no keyslot JSON.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: bundle))
        XCTAssertNil(bytes.range(of: files[0].1.prefix(64)))
        XCTAssertNil(bytes.range(of: Data("password-1".utf8)))
        return (bundle, files)
    }

    func assertRestored(_ target: URL, _ files: [(String, Data)], password: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let env = ["VAULT_HOME": target.path]
        for (p, d) in files {
            let r = try h.run(["cat", p] + password, env: env)
            XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
            XCTAssertEqual(r.stdout, d, "content of \(p)", file: file, line: line)
        }
        let doc = try h.run(["doctor", "--verify"] + password, env: env)
        XCTAssertEqual(doc.status, 0, doc.out + doc.stderr, file: file, line: line)
        XCTAssertTrue(doc.out.contains("Everything is consistent"), doc.out, file: file, line: line)
        var st = stat()
        for p in ["", "/cache", "/staging", "/tmp"] { stat(target.path + p, &st); XCTAssertEqual(st.st_mode & 0o777, 0o700, p, file: file, line: line) }
        for p in ["/keyslots", "/metadata.db"] { stat(target.path + p, &st); XCTAssertEqual(st.st_mode & 0o777, 0o600, p, file: file, line: line) }
    }

    func testPassphraseBundleRoundTrip() throws {
        let pass = try passphraseFile()
        // A failed unlock first: the failed-unlock counter travels with the vault.
        XCTAssertEqual(try h.run(["ls", "/", "--password-file", try h.localFile("bad-pw", Data("not the password\n".utf8))]).status, 3)
        let (bundle, files) = try exportBundle(["--passphrase-file", pass])
        let counter = try Data(contentsOf: vaultDir.appendingPathComponent("unlock-failures"))
        XCTAssertTrue(String(decoding: counter, as: UTF8.self).contains("\"total\":1"))
        let target = try freshHome()
        let newPw = try h.localFile("new-pw", Data("a brand new password\n".utf8))
        let r = try h.run(["backup", "import", bundle, "--passphrase-file", pass, "--new-password-file", newPw, "--json"] + kdf,
                          env: ["VAULT_HOME": target.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let j = try XCTUnwrap(r.json as? [String: Any])
        XCTAssertEqual(j["files"] as? Int, 6)
        XCTAssertEqual(j["passwordAdded"] as? Bool, true)
        XCTAssertEqual(try Data(contentsOf: target.appendingPathComponent("unlock-failures")), counter)
        // The original password still opens it, and so does the password set from the bundle's key.
        try assertRestored(target, files, password: h.pw)
        try assertRestored(target, files, password: ["--password-file", newPw])
        // The source vault is untouched and the bundle was never overwritten.
        try assertRestored(vaultDir, files, password: h.pw)
        let again = try h.run(["backup", "export", bundle, "--passphrase-file", pass] + kdf + h.pw)
        XCTAssertEqual(again.status, 5, again.stderr)
    }

    func testRecoveryKeyBundleRoundTrip() throws {
        let key = try XCTUnwrap((try h.ok(["key", "add-recovery", "--json"] + h.pw).json as? [String: String])?["recoveryKey"])
        let keyFile = try h.localFile("rk", Data(key.utf8))
        // A key that is not this vault's is refused at export (no unopenable bundle).
        let other = try h.localFile("rk-other", Data("AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA".utf8))
        XCTAssertEqual(try h.run(["backup", "export", h.root.appendingPathComponent("x.bundle").path, "--recovery-key-file", other] + h.pw).status, 3)
        let (bundle, files) = try exportBundle(["--recovery-key-file", keyFile])
        let target = try freshHome()
        // The wrong kind of secret is a usage error naming the right one.
        let wrongKind = try h.run(["backup", "import", bundle, "--passphrase-file", try passphraseFile()], env: ["VAULT_HOME": target.path])
        XCTAssertEqual(wrongKind.status, 2, wrongKind.stderr)
        XCTAssertTrue(wrongKind.stderr.contains("--recovery-key-file"), wrongKind.stderr)
        try assertNothingPublished(target)
        let r = try h.run(["backup", "import", bundle, "--recovery-key-file", keyFile], env: ["VAULT_HOME": target.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        try assertRestored(target, files, password: h.pw)
        // The recovery key opens the imported vault too.
        let u = try h.run(["unlock", "--recovery-key-file", keyFile], env: ["VAULT_HOME": target.path])
        XCTAssertEqual(u.status, 0, u.stderr)
    }

    func testWrongSecretsAreRefusedAndNothingIsPublished() throws {
        let (bundle, _) = try exportBundle(["--passphrase-file", try passphraseFile()])
        let target = try freshHome()
        let r = try h.run(["backup", "import", bundle, "--passphrase-file", try passphraseFile("not the passphrase")], env: ["VAULT_HOME": target.path])
        XCTAssertEqual(r.status, 3, r.stderr)
        XCTAssertTrue(r.stderr.contains("wrong backup passphrase"), r.stderr)
        try assertNothingPublished(target)
        // A recovery key offered to a passphrase bundle names what is needed.
        let key = try h.localFile("rk", Data("AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA".utf8))
        let k = try h.run(["backup", "import", bundle, "--recovery-key-file", key], env: ["VAULT_HOME": target.path])
        XCTAssertNotEqual(k.status, 0)
        try assertNothingPublished(target)
    }

    func testFlippedByteAnywhereIsRefusedWithNothingPublished() throws {
        let pass = try passphraseFile()
        let (bundle, _) = try exportBundle(["--passphrase-file", pass])
        let pristine = try Data(contentsOf: URL(fileURLWithPath: bundle))
        let n = pristine.count
        let segment = 65536 + 16
        // Sealed header, body header (master key), inside and at the tags of segments, the final
        // segment, and every field of the key block at the end.
        let offsets = [0, 9, 20, 40, 60, 100, 112, 112 + 30, 112 + 60, 112 + segment - 1, 112 + segment + 5000,
                       112 + 2 * segment + 17, n - 129, n - 140,
                       n - 128, n - 120, n - 119, n - 109, n - 103, n - 100, n - 90, n - 75, n - 61, n - 55, n - 30, n - 1]
        for offset in offsets {
            var bytes = pristine
            bytes[offset] ^= 0x01
            let damaged = h.root.appendingPathComponent("flipped-\(offset).bundle")
            try bytes.write(to: damaged)
            let target = try freshHome()
            let r = try h.run(["backup", "import", damaged.path, "--passphrase-file", pass], env: ["VAULT_HOME": target.path])
            XCTAssertNotEqual(r.status, 0, "a flipped byte at \(offset) of \(n) was accepted")
            XCTAssertTrue([2, 3, 6].contains(r.status), "offset \(offset): \(r.status) \(r.stderr)")
            try assertNothingPublished(target)
        }
        // Control: the pristine bundle imports.
        let target = try freshHome()
        XCTAssertEqual(try h.run(["backup", "import", bundle, "--passphrase-file", pass], env: ["VAULT_HOME": target.path]).status, 0)
    }

    func testTruncatedOrExtendedBundleIsRefused() throws {
        let pass = try passphraseFile()
        let (bundle, _) = try exportBundle(["--passphrase-file", pass])
        let pristine = try Data(contentsOf: URL(fileURLWithPath: bundle))
        let segment = 65536 + 16
        var variants: [(String, Data)] = [10, 128, 129, 500, pristine.count / 2, pristine.count - 112 - segment, pristine.count - 1]
            .map { ("cut \($0)", pristine.prefix($0)) }
        variants.append(("missing last byte", pristine.dropLast()))
        variants.append(("trailer moved after an extra byte", pristine.prefix(pristine.count - 128) + Data([0]) + pristine.suffix(128)))
        variants.append(("a segment dropped", pristine.prefix(112 + segment) + pristine.dropFirst(112 + 2 * segment)))
        variants.append(("empty", Data()))
        for (what, bytes) in variants {
            let damaged = h.root.appendingPathComponent("short-\(UUID().uuidString).bundle")
            try bytes.write(to: damaged)
            let target = try freshHome()
            let r = try h.run(["backup", "import", damaged.path, "--passphrase-file", pass], env: ["VAULT_HOME": target.path])
            XCTAssertNotEqual(r.status, 0, "\(what) was accepted")
            XCTAssertTrue([3, 6].contains(r.status), "\(what): \(r.status) \(r.stderr)")
            try assertNothingPublished(target)
        }
    }

    func testImportIntoNonEmptyVaultHomeIsRefused() throws {
        let pass = try passphraseFile()
        let (bundle, files) = try exportBundle(["--passphrase-file", pass])
        // Into the existing vault itself.
        let r = try h.run(["backup", "import", bundle, "--passphrase-file", pass])
        XCTAssertEqual(r.status, 5, r.stderr)
        XCTAssertTrue(r.stderr.contains("not empty"), r.stderr)
        try assertRestored(vaultDir, files, password: h.pw)
        // Into a folder holding anything at all.
        let target = try freshHome()
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: target.appendingPathComponent("notes.txt"))
        XCTAssertEqual(try h.run(["backup", "import", bundle, "--passphrase-file", pass], env: ["VAULT_HOME": target.path]).status, 5)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: target.path), ["notes.txt"])
        // An empty folder is fine.
        let empty = try freshHome()
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        XCTAssertEqual(try h.run(["backup", "import", bundle, "--passphrase-file", pass], env: ["VAULT_HOME": empty.path]).status, 0)
        try assertRestored(empty, files, password: h.pw)
    }
}
