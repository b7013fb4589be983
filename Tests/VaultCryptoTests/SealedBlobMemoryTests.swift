import XCTest
@testable import VaultCrypto

/// The in-memory reader gives the same plaintext as the file reader and detects the same damage.
final class SealedBlobMemoryTests: XCTestCase {
    func testMemoryReaderRoundTripAndTamper() throws {
        let vaultId = SecureRandom.bytes(16), blobId = SecureRandom.bytes(16)
        let wrapKey = SecureBytes.random(count: 32)
        let plaintext = (0..<(3 * 4096 + 100)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var sealed: [UInt8] = []
        let w = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 1, wrapKey: wrapKey, segmentSize: 4096) {
            sealed += $0
        }
        try w.write(plaintext)
        _ = try w.finish()
        try sealed.withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            XCTAssertEqual(r.plaintextSize, UInt64(plaintext.count))
            var out: [UInt8] = []
            try r.stream { out += $0 }
            XCTAssertEqual(out, plaintext)
            XCTAssertEqual(try r.read(offset: 5000, count: 3000), Array(plaintext[5000..<8000]))
        }
        var bad = sealed
        bad[SealedBlobHeader.size + 4096 + 16 + 7] ^= 1   // inside segment 1
        try bad.withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            var released = 0
            XCTAssertThrowsError(try r.stream { released += $0.count })
            XCTAssertEqual(released, 4096, "only segment 0 is released")
        }
        // A read into the caller's buffer across the bad segment leaves nothing of segment 0 there.
        try bad.withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            var buffer = [UInt8](repeating: 0xEE, count: 3 * 4096)
            XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try r.read(offset: 100, into: $0) })
            XCTAssertEqual(Array(buffer[..<(4096 - 100)]), [UInt8](repeating: 0, count: 4096 - 100),
                           "the authenticated bytes of segment 0 are zeroed when a later segment fails")
            XCTAssertEqual(Array(buffer[(4096 - 100)...]), [UInt8](repeating: 0xEE, count: 2 * 4096 + 100), "nothing of the bad segment")
            XCTAssertEqual(try buffer.withUnsafeMutableBytes { try r.read(offset: 100, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<1000])) }, 1000)
            XCTAssertEqual(Array(buffer[..<1000]), Array(plaintext[100..<1100]), "a read inside segment 0 still succeeds")
        }
        try sealed.withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            var buffer = [UInt8](repeating: 0, count: 8192)
            let n = try buffer.withUnsafeMutableBytes { try r.read(offset: UInt64(plaintext.count - 50), into: $0) }
            XCTAssertEqual(n, 50, "clamped to the end")
            XCTAssertEqual(Array(buffer[..<50]), Array(plaintext.suffix(50)))
            XCTAssertEqual(try buffer.withUnsafeMutableBytes { try r.read(offset: UInt64(plaintext.count + 9), into: $0) }, 0)
        }
        try Array(sealed.dropLast(16 + 100)).withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            XCTAssertThrowsError(try r.stream { _ in })    // truncated at a segment boundary
        }
    }
}

/// A partial blob (an interrupted download) resumes after its last good segment.
final class SealedBlobResumeTests: XCTestCase {
    func testResumeKeepsVerifiedSegmentsAndFinishesTheSameBlob() throws {
        let vaultId = SecureRandom.bytes(16), blobId = SecureRandom.bytes(16)
        let wrapKey = SecureBytes.random(count: 32)
        let plaintext = (0..<(10 * 4096 + 77)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)").path
        defer { unlink(path) }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        func append(_ b: UnsafeRawBufferPointer) throws { _ = write(fd, b.baseAddress, b.count) }
        // A first run writes about 6 segments, then "dies" mid-segment.
        let first = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 1, wrapKey: wrapKey, segmentSize: 4096) { try append($0) }
        try first.write(Array(plaintext[0..<(6 * 4096 + 1000)]))
        _ = try first.finish()   // flushes everything, final segment flagged last
        var size = lseek(fd, 0, SEEK_END)
        XCTAssertEqual(ftruncate(fd, size - 500), 0)      // torn tail: the final segment is cut
        size -= 500
        // A flipped byte in segment 4 makes resume keep segments 0...3 only.
        var b: UInt8 = 0
        _ = pread(fd, &b, 1, off_t(SealedBlobHeader.size + 4 * (4096 + 16) + 9)); b ^= 1
        _ = pwrite(fd, &b, 1, off_t(SealedBlobHeader.size + 4 * (4096 + 16) + 9))
        let r = try SealedBlobWriter.resume(partial: fd, fileSize: UInt64(size), wrapKey: wrapKey,
                                            expectedVaultId: vaultId, expectedBlobId: blobId) { try append($0) }
        XCTAssertEqual(r.resumeAt, 4 * 4096)
        XCTAssertEqual(ftruncate(fd, off_t(r.keptBytes)), 0)
        _ = lseek(fd, 0, SEEK_END)
        try r.writer.write(Array(plaintext[Int(r.resumeAt)...]))
        XCTAssertEqual(try r.writer.finish(), UInt64(plaintext.count))
        var whole = SHA256Hasher(); whole.update(plaintext)
        XCTAssertEqual(r.writer.plaintextSHA256, whole.finalize(), "the checksum covers kept and new bytes")
        let total = UInt64(lseek(fd, 0, SEEK_END))
        let reader = try SealedBlobReader(fileDescriptor: fd, fileSize: total, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
        var out: [UInt8] = []
        try reader.stream { out += $0 }
        XCTAssertEqual(out, plaintext)
        // Another blob's id is refused.
        XCTAssertThrowsError(try SealedBlobWriter.resume(partial: fd, fileSize: total, wrapKey: wrapKey, expectedVaultId: vaultId,
                                                         expectedBlobId: SecureRandom.bytes(16)) { _ in })
    }
}
