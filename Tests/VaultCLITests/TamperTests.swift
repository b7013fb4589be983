import Foundation
import XCTest

/// Damaged and tampered data is detected, named, and never yields wrong plaintext.
final class TamperTests: XCTestCase {
    var h: CLIHarness!
    let segment = 65536
    var original = Data()

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        var bytes = [UInt8](repeating: 0, count: 3 * segment + 1000)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i % 251) }
        original = Data(bytes)
        try h.ok(["put", try h.localFile("big.bin", original), "/big.bin"] + h.pw)
        try h.ok(["put", try h.localFile("small.txt", Data("small file".utf8)), "/small.txt"] + h.pw)
    }

    func blobPath(of path: String) throws -> URL {
        // big.bin's blob is the large one.
        let files = try h.blobFiles("staging")
        let sizes = try files.map { ($0, try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as! NSNumber) }
        let sorted = sizes.sorted { $0.1.intValue > $1.1.intValue }
        return path == "/big.bin" ? sorted[0].0 : sorted[1].0
    }

    func catFails(_ path: String, maxPrefix: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try h.run(["cat", path] + h.pw)
        XCTAssertEqual(r.status, 6, "expected an integrity error: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains("damaged or was tampered with") || r.stderr.contains("missing"), r.stderr, file: file, line: line)
        XCTAssertLessThanOrEqual(r.stdout.count, maxPrefix, "plaintext released past the failing segment", file: file, line: line)
        XCTAssertEqual(r.stdout, original.prefix(r.stdout.count), "released bytes must be authentic", file: file, line: line)
    }

    func testFlippedByteAnywhereIsDetected() throws {
        let url = try blobPath(of: "/big.bin")
        let pristine = try Data(contentsOf: url)
        // Header fields, the wrapped key, each segment's ciphertext and tag.
        for offset in [0, 9, 12, 20, 40, 50, 60, 100, 112, 112 + segment + 15, 2 * (segment + 16) + 200, pristine.count - 1] {
            var d = pristine
            d[offset] ^= 0x01
            try d.write(to: url)
            let failingSegment = offset < 112 ? 0 : (offset - 112) / (segment + 16)
            try catFails("/big.bin", maxPrefix: failingSegment * segment)
        }
        try pristine.write(to: url)
        XCTAssertEqual(try h.ok(["cat", "/big.bin"] + h.pw).stdout, original)
    }

    func testTruncationIsDetected() throws {
        let url = try blobPath(of: "/big.bin")
        let pristine = try Data(contentsOf: url)
        for cut in [112 + 2 * (segment + 16), 112 + segment + 16, pristine.count - 1, 112 + 10, 50] {
            try pristine.prefix(cut).write(to: url)
            let body = max(0, cut - 112), stride = segment + 16
            try catFails("/big.bin", maxPrefix: (body % stride == 0 ? max(0, body / stride - 1) : body / stride) * segment)
        }
        try pristine.write(to: url)
    }

    func testReorderedSegmentsAreDetected() throws {
        let url = try blobPath(of: "/big.bin")
        let d = try Data(contentsOf: url)
        let stride = segment + 16
        let s1 = d.subdata(in: 112 + stride..<112 + 2 * stride)
        let s2 = d.subdata(in: 112 + 2 * stride..<112 + 3 * stride)
        var swapped = d
        swapped.replaceSubrange(112 + stride..<112 + 2 * stride, with: s2)
        swapped.replaceSubrange(112 + 2 * stride..<112 + 3 * stride, with: s1)
        try swapped.write(to: url)
        try catFails("/big.bin", maxPrefix: segment)
    }

    func testSwappedBlobsAreDetected() throws {
        let big = try blobPath(of: "/big.bin"), small = try blobPath(of: "/small.txt")
        let b = try Data(contentsOf: big), s = try Data(contentsOf: small)
        try s.write(to: big); try b.write(to: small)
        try catFails("/big.bin", maxPrefix: 0)
        let r = try h.run(["cat", "/small.txt"] + h.pw)
        XCTAssertEqual(r.status, 6); XCTAssertEqual(r.stdout.count, 0)
        // doctor names what is lost (never uploaded) and exits non-zero
        let doc = try h.run(["doctor", "--verify"] + h.pw)
        XCTAssertEqual(doc.status, 6)
        XCTAssertTrue(doc.out.contains("/big.bin") && doc.out.contains("never uploaded"), doc.out)
    }

    func testMissingBlobIsReported() throws {
        try FileManager.default.removeItem(at: try blobPath(of: "/small.txt"))
        try catFails("/small.txt", maxPrefix: 0)
    }

    func testDamagedKeyslotFile() throws {
        let url = h.home.appendingPathComponent("keyslots")
        let pristine = try Data(contentsOf: url)
        for offset in [0, 5, pristine.count / 3, pristine.count / 2, pristine.count - 10] {
            var d = pristine
            d[offset] ^= 0x04
            try d.write(to: url)
            let r = try h.run(["ls"] + h.pw)
            XCTAssertEqual(r.status, 6, "offset \(offset): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("keyslot file is damaged"), r.stderr)
        }
        // A deliberate edit that also fixes the unkeyed checksum still fails (wrap AAD or MAC).
        var text = String(decoding: pristine, as: UTF8.self).split(separator: "\n").map(String.init)
        text[0] = text[0].replacingOccurrences(of: "\"epoch\":1", with: "\"epoch\":2")
        let task = Process()
        task.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let pipe = Pipe(), inPipe = Pipe()
        task.standardOutput = pipe; task.standardInput = inPipe
        try task.run()
        inPipe.fileHandleForWriting.write(Data(text[0].utf8)); try inPipe.fileHandleForWriting.close()
        let sum = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
        task.waitUntilExit()
        text[1] = "sha256:\(sum)"
        try Data((text.joined(separator: "\n") + "\n").utf8).write(to: url)
        let r = try h.run(["ls"] + h.pw)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("altered") || r.stderr.contains("cannot be decrypted"), r.stderr)
        try pristine.write(to: url)
        try h.ok(["ls"] + h.pw)
    }

    func testDatabaseFromAnotherVaultOrDamaged() throws {
        let other = try CLIHarness(keyring: false)
        try other.initVault()
        let db = h.home.appendingPathComponent("metadata.db")
        let pristine = try Data(contentsOf: db)
        try Data(contentsOf: other.home.appendingPathComponent("metadata.db")).write(to: db)
        var r = try h.run(["ls"] + h.pw)
        XCTAssertEqual(r.status, 6)
        XCTAssertTrue(r.stderr.contains("cannot be decrypted"), r.stderr)
        // A flipped byte inside a page fails that page's HMAC.
        var d = pristine
        d[500] ^= 0x10   // inside page 1, which every open reads
        try d.write(to: db)
        r = try h.run(["ls", "--json"] + h.pw)
        XCTAssertEqual(r.status, 6, "a damaged page must be an integrity error: \(r.stderr)")
        try pristine.write(to: db)
        try h.ok(["ls"] + h.pw)
    }
}
