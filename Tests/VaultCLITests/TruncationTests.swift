import Foundation
import XCTest

/// `cat`, `get` and `doctor --verify` on blobs cut or extended at every class of point, for an
/// empty file, a 1-segment and a 2-segment file: always exit 6, never wrong plaintext, never a
/// published `get` file (issue 9, item 1: a blob cut to 128 bytes used to read as an empty file).
final class TruncationTests: XCTestCase {
    var h: CLIHarness!
    let segment = 65536
    var stride: Int { segment + 16 }
    let header = 112
    /// Plaintext by vault path.
    var files: [String: Data] = [:]

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        files = ["/empty": Data(),
                 "/one": Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
                 "/two": Data((0..<(segment + 1000)).map { UInt8(truncatingIfNeeded: $0 % 251) })]
        for (path, data) in files.sorted(by: { $0.key < $1.key }) {
            try h.ok(["put", try h.localFile(String(path.dropFirst()), data), path] + h.pw)
        }
    }

    /// The staged blob file of `path` (by its sealed size: the three sizes differ).
    func blob(of path: String) throws -> URL {
        let sealed = header + files[path]!.count + 16 * max(1, (files[path]!.count + segment - 1) / segment)
        return try XCTUnwrap(try h.blobFiles("staging").first {
            (try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber)?.intValue == sealed
        }, "no blob of \(sealed) bytes for \(path)")
    }

    /// cat, get and doctor --verify all fail with exit 6, release no wrong byte, publish nothing.
    func assertEveryReadFails(_ path: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let context = "\(path) \(what)"
        let original = files[path]!
        let cat = try h.run(["cat", path] + h.pw)
        XCTAssertEqual(cat.status, 6, "cat \(context): \(cat.stderr)", file: file, line: line)
        XCTAssertTrue(cat.stderr.contains("damaged or was tampered with"), "cat \(context): \(cat.stderr)", file: file, line: line)
        XCTAssertEqual(cat.stdout, original.prefix(cat.stdout.count), "cat \(context) released wrong bytes", file: file, line: line)
        XCTAssertLessThan(cat.stdout.count, max(1, original.count), "cat \(context) released the whole file and failed", file: file, line: line)

        let target = h.root.appendingPathComponent("out-\(UUID().uuidString)")
        let get = try h.run(["get", path, target.path] + h.pw)
        XCTAssertEqual(get.status, 6, "get \(context): \(get.stderr)", file: file, line: line)
        XCTAssertFalse(get.out.contains("Wrote"), "get \(context): \(get.out)", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "get \(context) published a file", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path + ".vault-partial"), "get \(context) left its partial", file: file, line: line)

        let doctor = try h.run(["doctor", "--verify"] + h.pw)
        XCTAssertEqual(doctor.status, 6, "doctor --verify \(context): \(doctor.out) \(doctor.stderr)", file: file, line: line)
        XCTAssertTrue(doctor.out.contains("PROBLEM: \(path):"), "doctor --verify \(context): \(doctor.out)", file: file, line: line)
        XCTAssertFalse(doctor.out.contains("consistent"), "doctor --verify \(context): \(doctor.out)", file: file, line: line)
    }

    func assertEveryReadWorks(file: StaticString = #filePath, line: UInt = #line) throws {
        for (path, data) in files {
            XCTAssertEqual(try h.ok(["cat", path] + h.pw, file: file, line: line).stdout, data, path, file: file, line: line)
        }
        XCTAssertTrue(try h.ok(["doctor", "--verify"] + h.pw).out.contains("authenticated 3 blob(s)"), file: file, line: line)
    }

    /// The reported case: any blob cut to exactly the header plus 16 bytes.
    func testBlobCutToHeaderPlus16BytesFails() throws {
        for path in ["/one", "/two"] {
            let url = try blob(of: path)
            let pristine = try Data(contentsOf: url)
            for start in [header, pristine.count - 16] {     // the header plus the first or the last 16 bytes
                try (pristine.prefix(header) + pristine.subdata(in: start..<start + 16)).write(to: url)
                try assertEveryReadFails(path, "cut to 128 bytes (header + bytes \(start)..<\(start + 16))")
            }
            try pristine.write(to: url)
        }
        try assertEveryReadWorks()
    }

    /// An empty file's only segment is empty; its tag is still checked by every read.
    func testEmptyFileTagIsChecked() throws {
        let url = try blob(of: "/empty")
        let pristine = try Data(contentsOf: url)
        XCTAssertEqual(pristine.count, header + 16)
        for offset in [header, header + 7, header + 15] {
            var bad = pristine
            bad[offset] ^= 0x01
            try bad.write(to: url)
            try assertEveryReadFails("/empty", "with tag byte \(offset - header) flipped")
        }
        try pristine.write(to: url)
        XCTAssertEqual(try h.ok(["cat", "/empty"] + h.pw).stdout, Data())
        let target = h.root.appendingPathComponent("empty-out")
        XCTAssertTrue(try h.ok(["get", "/empty", target.path] + h.pw).out.contains("(0 B)"))
        XCTAssertEqual(try Data(contentsOf: target), Data())
        try assertEveryReadWorks()
    }

    /// Every cut and extension class of the 1- and 2-segment files.
    func testEveryCutAndExtensionFails() throws {
        for path in ["/one", "/two"] {
            let url = try blob(of: path)
            let pristine = try Data(contentsOf: url)
            var cuts = [(header - 1, "inside the header"), (header + 8, "inside the first tag"),
                        (pristine.count - 1, "one byte short"), (pristine.count - 8, "inside the final tag")]
            if path == "/two" {
                cuts += [(header + stride, "at the segment boundary"), (header + stride - 8, "inside segment 0's tag"),
                         (header + stride + 16, "one tag past the boundary")]
            }
            for (cut, what) in cuts {
                try pristine.prefix(cut).write(to: url)
                try assertEveryReadFails(path, "cut to \(cut) bytes (\(what))")
            }
            for (extra, what) in [(Data([0]), "extended by 1 byte"), (Data(repeating: 0, count: 16), "extended by 16 bytes"),
                                  (pristine.suffix(16), "extended by a copy of its last 16 bytes")] {
                try (pristine + extra).write(to: url)
                try assertEveryReadFails(path, what)
            }
            try pristine.write(to: url)
        }
        try assertEveryReadWorks()
    }

    /// The size and SHA-256 the database records are what a read is checked against: a node whose
    /// recorded checksum differs makes `cat` say its output is not trustworthy, and `get` publish nothing.
    func testRecordedSizeAndChecksumAreChecked() throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/sqlcipher") else {
            throw XCTSkip("needs the sqlcipher command-line tool (scripts/install-deps.sh)")
        }
        let key = try DocumentedKeys.databaseKeyHex(vaultHome: h.home.path, password: CLIHarness.password)
        let db = h.home.appendingPathComponent("metadata.db").path
        func sql(_ statement: String) throws {
            let (st, out) = try runCapture("/usr/bin/sqlcipher", [db], stdin: "PRAGMA key = \"x'\(key)'\";\n\(statement);\n")
            XCTAssertEqual(st, 0, out)
        }
        try sql("UPDATE nodes SET sha256 = '\(String(repeating: "ab", count: 32))' WHERE name = 'two'")
        // `cat` checks the length (each byte is authenticated by its segment); `get` and
        // `doctor --verify` also check the SHA-256.
        XCTAssertEqual(try h.run(["cat", "/two"] + h.pw).status, 0)
        let target = h.root.appendingPathComponent("two-out")
        let get = try h.run(["get", "/two", target.path] + h.pw)
        XCTAssertEqual(get.status, 6, get.stderr)
        XCTAssertTrue(get.stderr.contains("was not written"), get.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path + ".vault-partial"))
        XCTAssertEqual(try h.run(["doctor", "--verify"] + h.pw).status, 6)

        try sql("UPDATE nodes SET sha256 = (SELECT sha256 FROM blobs WHERE blobs.id = nodes.local_path) WHERE name = 'two'")
        try sql("UPDATE nodes SET size = size + 1 WHERE name = 'one'")
        let short = try h.run(["cat", "/one"] + h.pw)
        XCTAssertEqual(short.status, 6, short.stderr)
        XCTAssertEqual(short.stdout.count, 0, "a size mismatch is refused before any byte")
        XCTAssertTrue(short.stderr.contains("nothing was written"), short.stderr)
        try sql("UPDATE nodes SET size = size - 1 WHERE name = 'one'")
        try assertEveryReadWorks()
    }
}
