import Foundation
import VaultTestSupport
import XCTest

/// Schema 10's bases that take their fields from their node (issue 21, SECURITY.md "Metadata
/// database"), through the binaries: a device's first pull stores the bases of its pulled nodes
/// without their parent, name and content fields; local renames, moves, edits and removals keep
/// every base as the server last said it (read by the independent decoder, field by field); the
/// next sync brings both devices to the same bases.
extension TwoWaySyncTests {
    /// `vault`'s bases on `h` as scripts/independent-decrypt.py decodes them (`base <JSON>` lines, by id).
    func decodedBases(_ h: CLIHarness, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        guard (try? runTool("/usr/bin/env", ["python3", "-c", "import cryptography, argon2"])) == 0 else {
            throw XCTSkip("python3 with cryptography and argon2-cffi is needed (scripts/check-independent-decrypt.sh installs them)")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/independent-decrypt.py")
        let (status, out) = try runCapture("/usr/bin/env", ["python3", script.path, h.home.path, "--password-file", h.passwordFile.path,
                                                             "--check-db-pages", "--dump-bases"])
        XCTAssertEqual(status, 0, out, file: file, line: line)
        return out.split(separator: "\n").filter { $0.hasPrefix("base ") }.map(String.init)
    }

    /// How many of `h`'s bases take their fields from their node, and how many there are.
    func basesFromNodes(_ h: CLIHarness) throws -> String {
        let key = try DocumentedKeys.databaseKeyHex(vaultHome: h.home.path, password: CLIHarness.password)
        let (st, out) = try runCapture("/usr/bin/sqlcipher", ["-batch", h.home.appendingPathComponent("metadata.db").path],
                                       stdin: "PRAGMA key = \"x'\(key)'\";\nSELECT sum(from_node), count(*) FROM remote_base;\n")
        XCTAssertEqual(st, 0, out)
        return out.split(separator: "\n").filter { $0 != "ok" }.joined()
    }

    func testBasesOfPulledNodesTakeTheirFieldsFromTheNodeAndOutliveLocalChanges() throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/sqlcipher") else {
            throw XCTSkip("needs the sqlcipher command-line tool (scripts/install-deps.sh)")
        }
        try a.ok(["mkdir", "/docs"] + a.pw)
        try a.ok(["mkdir", "/docs/deep"] + a.pw)
        for (path, text) in [("/docs/plan.txt", "the plan"), ("/docs/deep/x.txt", "x"), ("/notes.txt", "notes v1"),
                             ("/gone.txt", "soon gone"), ("/Grüße ✓.txt", "unicode")] {
            try put(a, path, text)
        }
        try sync(a)
        try sync(b)
        let server = try decodedBases(a)
        XCTAssertEqual(server.count, 7, server.joined(separator: "\n"))
        XCTAssertEqual(try decodedBases(b), server, "the pulled bases read as the pushing device's")
        XCTAssertEqual(try basesFromNodes(a), "0|7", "a device's own nodes have other ids: whole bases")
        XCTAssertEqual(try basesFromNodes(b), "7|7", "every pulled base takes its fields from its node")

        // Local changes on B: a rename, a move, an edit, a removal, a touch of a folder. The
        // bases are what the server last said, whatever the nodes say now.
        try b.ok(["mv", "/docs/plan.txt", "/docs/plan v2.txt"] + b.pw)
        try b.ok(["mv", "/docs/deep", "/deep"] + b.pw)
        try put(b, "/notes.txt", "notes v2 from b", replace: true)
        try b.ok(["rm", "/gone.txt"] + b.pw)
        XCTAssertEqual(try cat(b, "/Grüße ✓.txt"), "unicode")   // a read (and a download) changes no base
        XCTAssertEqual(try decodedBases(b), server, "local changes keep every base")
        XCTAssertTrue(try isConsistent(b), "vault doctor on B")

        // Both ways again: the same bases on both devices, and the same tree.
        try sync(b)
        try sync(a)
        XCTAssertEqual(try tree(a), try tree(b))
        XCTAssertEqual(try decodedBases(a), try decodedBases(b))
        XCTAssertTrue(try a.ok(["ls", "/docs"] + a.pw).out.contains("plan v2.txt"))
    }

    private func isConsistent(_ h: CLIHarness) throws -> Bool {
        try h.ok(["doctor"] + h.pw).out.contains("Everything is consistent.")
    }
}
