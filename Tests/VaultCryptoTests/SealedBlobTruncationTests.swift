import Foundation
import XCTest
import VaultTestSupport
@testable import VaultCrypto

/// A sealed blob cut or extended anywhere never yields wrong plaintext: for every segment count
/// (an empty blob, one, two, and more than one pread batch of segments) and every class of cut
/// (inside the header, exactly header + one tag, inside a tag, at each segment boundary, one byte
/// short, extended by 1 and by 16 bytes), every read that reaches the end of the blob fails, and
/// whatever plaintext was delivered before the failure is an authentic prefix (SECURITY.md "Reading").
final class SealedBlobTruncationTests: XCTestCase {
    let vaultId = [UInt8](repeating: 0x5A, count: 16)
    let blobId = Array(0x40..<0x50).map { UInt8($0) }
    let wrapKey = SecureBytes.random(count: 32)
    let s = 4096
    var stride: Int { s + 16 }
    /// Seeds the test data; printed with every failure so it reproduces.
    lazy var seed = TestSeed.make(self.name)

    private func seal(_ plaintext: [UInt8]) throws -> [UInt8] {
        try sealedBlob(plaintext, vaultId: vaultId, blobId: blobId, wrapKey: wrapKey, segmentSize: s)
    }

    /// Plaintext sizes: no data (one empty final segment), one segment (short and full), two
    /// segments (short and full final), and 70 segments (more than the 63 that one pread batch holds).
    var sizes: [Int] { [0, 1, 100, s - 1, s, s + 1, 2 * s - 1, 2 * s, 69 * s + 10, 70 * s] }

    /// Every truncation point class for a blob of `length` bytes with `segments` segments.
    func cuts(length: Int, segments: Int) -> [(Int, String)] {
        let header = SealedBlobHeader.size
        var out: [(Int, String)] = [(0, "empty file"), (1, "inside the header"), (50, "inside the header"),
                                    (header - 1, "inside the header"), (header, "header only"),
                                    (header + 1, "inside the first tag"), (header + 15, "inside the first tag"),
                                    (header + 16, "exactly header + 16")]
        for k in 1..<segments {
            let boundary = header + k * stride
            out += [(boundary, "at segment boundary \(k)"), (boundary - 8, "inside the tag of segment \(k - 1)"),
                    (boundary + 1, "1 byte into segment \(k)"), (boundary + 16, "one tag into segment \(k)")]
        }
        out += [(length - 1, "one byte short"), (length - 8, "inside the final tag"), (length - 16, "the final tag removed")]
        return out.filter { $0.0 >= 0 && $0.0 < length }
    }

    /// Runs every whole-blob and end-reaching read of `damaged` (from a file and from memory) and
    /// asserts each one fails, releasing only an authentic prefix of `plaintext`.
    func assertNoWrongPlaintext(_ damaged: [UInt8], original plaintext: [UInt8], _ what: String,
                                file: StaticString = #filePath, line: UInt = #line) throws {
        let context = "\(what) (\(damaged.count) bytes; plaintext \(plaintext.count) bytes; seed \(seed))"
        func check(_ make: () throws -> SealedBlobReader) {
            let reader: SealedBlobReader
            do { reader = try make() } catch { return }   // refused at open: nothing released
            var streamed: [UInt8] = []
            XCTAssertThrowsError(try reader.stream { streamed += $0 }, "stream(): \(context)", file: file, line: line)
            XCTAssertEqual(streamed, Array(plaintext.prefix(streamed.count)), "stream() released wrong bytes: \(context)", file: file, line: line)
            XCTAssertThrowsError(try reader.read(offset: 0, count: Int(reader.plaintextSize) + 1), "read(0…end): \(context)", file: file, line: line)
            XCTAssertThrowsError(try reader.read(offset: reader.plaintextSize, count: 1), "read(at end): \(context)", file: file, line: line)
            if reader.plaintextSize > 0 {
                let tail = reader.plaintextSize - 1
                XCTAssertThrowsError(try reader.read(offset: tail, count: 1), "read(last byte): \(context)", file: file, line: line)
                var tailStreamed: [UInt8] = []
                XCTAssertThrowsError(try reader.stream(from: tail) { tailStreamed += $0 }, "stream(from: last byte): \(context)", file: file, line: line)
                if !tailStreamed.isEmpty, Int(tail) < plaintext.count {
                    XCTAssertEqual(tailStreamed, Array(plaintext[Int(tail)...].prefix(tailStreamed.count)), context, file: file, line: line)
                }
            }
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vault-trunc-\(UUID().uuidString).blob")
        try Data(damaged).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let fd = open(url.path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        check { try SealedBlobReader(fileDescriptor: fd, fileSize: UInt64(damaged.count), wrapKey: wrapKey,
                                     expectedVaultId: vaultId, expectedBlobId: blobId) }
        damaged.withUnsafeBytes { m in
            check { try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId) }
        }
    }

    func testEveryTruncationAndExtensionFailsForEverySegmentCount() throws {
        var random = SeededGenerator(seed: seed)
        for size in sizes {
            let plaintext = random.bytes(size)
            let blob = try seal(plaintext)
            let segments = max(1, (size + s - 1) / s)
            // The intact blob reads back whole, by every path.
            try blob.withUnsafeBytes { m in
                let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
                var out: [UInt8] = []
                try r.stream { out += $0 }
                XCTAssertEqual(out, plaintext, "size \(size), seed \(seed)")
                XCTAssertEqual(try r.read(offset: 0, count: size + 1), plaintext)
                XCTAssertEqual(try r.read(offset: UInt64(size), count: 1), [])
            }
            for (cut, what) in cuts(length: blob.count, segments: segments) {
                try assertNoWrongPlaintext(Array(blob.prefix(cut)), original: plaintext, "size \(size): cut to \(cut) bytes, \(what)")
            }
            try assertNoWrongPlaintext(blob + [0], original: plaintext, "size \(size): extended by 1 zero byte")
            try assertNoWrongPlaintext(blob + random.bytes(1), original: plaintext, "size \(size): extended by 1 random byte")
            try assertNoWrongPlaintext(blob + [UInt8](repeating: 0, count: 16), original: plaintext, "size \(size): extended by 16 zero bytes")
            try assertNoWrongPlaintext(blob + random.bytes(16), original: plaintext, "size \(size): extended by 16 random bytes")
        }
    }

    /// Any blob cut to exactly 128 bytes (the header plus any 16 bytes) reads as an error, never
    /// as an empty file: its "final segment" is opened and its tag fails.
    func testHeaderPlusAnySixteenBytesIsNeverAnEmptyFile() throws {
        var random = SeededGenerator(seed: seed)
        for size in [1, s, 3 * s + 5] {
            let plaintext = random.bytes(size)
            let blob = try seal(plaintext)
            let stride = self.stride
            for start in [SealedBlobHeader.size, SealedBlobHeader.size + 16, SealedBlobHeader.size + stride - 16, blob.count - 16] where start + 16 <= blob.count {
                let forged = Array(blob.prefix(SealedBlobHeader.size)) + Array(blob[start..<start + 16])
                try assertNoWrongPlaintext(forged, original: plaintext, "size \(size): header + the 16 bytes at \(start)")
            }
            try assertNoWrongPlaintext(Array(blob.prefix(SealedBlobHeader.size)) + random.bytes(16), original: plaintext,
                                       "size \(size): header + 16 random bytes")
        }
    }

    /// The tag of an empty blob's only (empty, final) segment is checked by a whole-blob read.
    func testEmptyFinalSegmentTagIsChecked() throws {
        let blob = try seal([])
        XCTAssertEqual(blob.count, SealedBlobHeader.size + 16)
        for i in SealedBlobHeader.size..<blob.count {
            var bad = blob
            bad[i] ^= 0xFF
            try assertNoWrongPlaintext(bad, original: [], "empty blob with tag byte \(i - SealedBlobHeader.size) flipped")
        }
        // The intact empty blob authenticates: a whole read succeeds with nothing.
        try blob.withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            var pieces = 0
            try r.stream { _ in pieces += 1 }
            XCTAssertEqual(pieces, 0)
            XCTAssertEqual(try r.read(offset: 0, count: 10), [])
        }
    }
}
