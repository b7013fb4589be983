import Foundation
import XCTest

/// What SECURITY.md says about keyslot KDF bounds, keyslot temp files, organisation key files and
/// names, held to through the binary: a writer never stores what a reader refuses.
final class KeyFormatTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
    }

    var keyslots: String { h.home.appendingPathComponent("keyslots").path }

    func slotKDF(_ password: [String]? = nil) throws -> String {
        let list = try XCTUnwrap(try h.ok(["key", "list", "--json"] + (password ?? h.pw)).json as? [[String: Any]])
        return try XCTUnwrap(list.first?["kdf"] as? String)
    }

    /// KDF parameters a keyslot reader refuses (Argon2id passes 1–64, memory 8 KiB–4 GiB, PBKDF2
    /// 1,000–100,000,000 iterations) are refused when asked for, so no vault is ever created that
    /// no password can open. (Before: `init --kdf-ops 65`, or `--kdf-time 10` calibrated to 120
    /// passes, made a vault that every unlock refused.)
    func testKDFParametersAKeyslotCannotHoldAreRefused() throws {
        for args in [["--kdf-ops", "65", "--kdf-mem", "8K"], ["--kdf-ops", "0"], ["--kdf-ops", "1", "--kdf-mem", "5G"],
                     ["--kdf-ops", "1", "--kdf-mem", "4K"], ["--kdf", "pbkdf2", "--pbkdf2-iterations", "100000001"],
                     ["--kdf", "pbkdf2", "--pbkdf2-iterations", "999"]] {
            let r = try h.run(["init"] + args + h.pw)
            XCTAssertEqual(r.status, 2, "init \(args): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: keyslots), "init \(args) must create nothing")
        }
        // The bounds themselves are accepted, and open again.
        try h.ok(["init", "--kdf-ops", "64", "--kdf-mem", "8K"] + h.pw)
        XCTAssertTrue(try slotKDF().hasPrefix("argon2id ops 64"))
        // `key passwd` refuses them too, and changes nothing.
        let newPw = try h.localFile("new", Data("another password\n".utf8))
        let r = try h.run(["key", "passwd", "--new-password-file", newPw, "--kdf-ops", "65"] + h.pw)
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(try slotKDF().hasPrefix("argon2id ops 64"))
    }

    /// `--kdf-mem` alone sets the memory that calibration uses (it was ignored without `--kdf-ops`).
    func testKDFMemoryAloneIsHonoured() throws {
        try h.ok(["init", "--kdf-mem", "16M", "--kdf-time", "0.05"] + h.pw)
        let kdf = try slotKDF()
        XCTAssertTrue(kdf.hasSuffix("16.0 MiB"), kdf)
    }

    /// A `keyslots.tmp-<pid>` left by a command killed while it rewrote the keyslot file (it holds
    /// wrapped master keys) is removed by the next command that holds the vault alone.
    func testKeyslotTempFileOfAKilledCommandIsRemoved() throws {
        try h.initVault()
        let leftover = h.home.appendingPathComponent("keyslots.tmp-4242").path
        try FileManager.default.copyItem(atPath: keyslots, toPath: leftover)
        try h.ok(["ls"] + h.pw)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover))
        try FileManager.default.copyItem(atPath: keyslots, toPath: leftover)
        try h.ok(["doctor"] + h.pw)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover))
    }

    /// `vault admin keygen` writes four new 0600 files of lowercase hex and one `\n`; it never
    /// overwrites a key. Key files are read strictly: hex with only whitespace around it, or the
    /// raw bytes; a stray character is refused (it was ignored).
    func testOrganisationKeyFiles() throws {
        let org = h.root.appendingPathComponent("org").path
        try h.ok(["admin", "keygen", "--out", org])
        for (name, bytes) in [("org-escrow.pub", 32), ("org-escrow.key", 32), ("org-signing.pub", 32), ("org-signing.key", 64)] {
            let path = org + "/" + name
            let text = try String(contentsOfFile: path, encoding: .utf8)
            XCTAssertEqual(text.count, 2 * bytes + 1, name)
            XCTAssertTrue(text.hasSuffix("\n"), name)
            XCTAssertTrue(text.dropLast().allSatisfy { "0123456789abcdef".contains($0) }, name)
            let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            XCTAssertEqual(mode, 0o600, name)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: org + "/org-escrow.key"))
        XCTAssertEqual(try h.run(["admin", "keygen", "--out", org]).status, 5)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: org + "/org-escrow.key")), before, "a key is never overwritten")

        try h.initVault()
        let pub = try String(contentsOfFile: org + "/org-escrow.pub", encoding: .utf8)
        let stray = try h.localFile("stray.pub", Data((pub.dropLast() + "x\n").utf8))
        XCTAssertEqual(try h.run(["key", "add-escrow", "--org-key", stray] + h.pw).status, 2)
        let upper = try h.localFile("upper.pub", Data(("  " + pub.uppercased() + "\n").utf8))
        try h.ok(["key", "add-escrow", "--org-key", upper] + h.pw)
    }

    /// Names are stored and compared byte for byte, never normalised: "café" with U+00E9 and with
    /// "e" + U+0301 are two names, and renaming one into the other's form renames it (it was
    /// taken for "the same name" and did nothing).
    func testNamesAreNotNormalised() throws {
        try h.initVault()
        let nfc = "/caf\u{E9}", nfd = "/cafe\u{301}"
        let f = try h.localFile("f", Data("x".utf8))
        try h.ok(["put", f, nfc] + h.pw)
        try h.ok(["mv", nfc, nfd] + h.pw)
        var names = try XCTUnwrap(try h.ok(["ls", "/", "--json"] + h.pw).json as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(names.map { Array($0.utf8) }, [Array("cafe\u{301}".utf8)])
        try h.ok(["put", f, nfc] + h.pw)
        names = try XCTUnwrap(try h.ok(["ls", "/", "--json"] + h.pw).json as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(Set(names.map { Array($0.utf8) }), [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
    }
}
