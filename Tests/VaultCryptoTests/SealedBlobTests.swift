import Foundation
import XCTest
import VaultTestSupport
@testable import VaultCrypto

final class SealedBlobTests: XCTestCase {
    let vaultId = [UInt8](repeating: 0x11, count: 16)
    let blobId = Array(0x20..<0x30).map { UInt8($0) }
    let wrapKey = SecureBytes.random(count: 32)
    let smallSegment = 4096
    var random = SeededGenerator(seed: 42)

    // MARK: Helpers

    /// Seals `plaintext` in `chunk`-sized writes and returns the blob bytes.
    private func seal(_ plaintext: [UInt8], segmentSize: Int, chunk: Int? = nil, keyEpoch: UInt32 = 1,
                      vaultId: [UInt8]? = nil, blobId: [UInt8]? = nil) throws -> (blob: [UInt8], digest: [UInt8]) {
        var blob: [UInt8] = []
        let writer = try SealedBlobWriter(vaultId: vaultId ?? self.vaultId, blobId: blobId ?? self.blobId, keyEpoch: keyEpoch,
                                          wrapKey: wrapKey, segmentSize: segmentSize) { blob.append(contentsOf: $0) }
        var offset = 0
        let step = max(chunk ?? plaintext.count, 1)
        repeat {
            let end = min(offset + step, plaintext.count)
            try writer.write(Array(plaintext[offset..<end]))
            offset = end
        } while offset < plaintext.count
        XCTAssertNil(writer.plaintextSHA256)
        XCTAssertEqual(try writer.finish(), UInt64(plaintext.count))
        return (blob, try XCTUnwrap(writer.plaintextSHA256))
    }

    /// Writes `blob` to a temporary file and runs `body` with an open descriptor and the size.
    private func withFile<T>(_ blob: [UInt8], _ body: (Int32, UInt64) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vault-crypto-\(UUID().uuidString).blob")
        try Data(blob).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let fd = open(url.path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        return try body(fd, UInt64(blob.count))
    }

    private func reader(_ fd: Int32, _ size: UInt64, key: SecureBytes? = nil, vaultId: [UInt8]? = nil, blobId: [UInt8]? = nil) throws -> SealedBlobReader {
        try SealedBlobReader(fileDescriptor: fd, fileSize: size, wrapKey: key ?? wrapKey,
                             expectedVaultId: vaultId ?? self.vaultId, expectedBlobId: blobId ?? self.blobId)
    }

    /// The whole plaintext through `read` (or an error).
    private func openAll(_ blob: [UInt8], key: SecureBytes? = nil, vaultId: [UInt8]? = nil, blobId: [UInt8]? = nil) throws -> [UInt8] {
        try withFile(blob) { fd, size in
            let r = try reader(fd, size, key: key, vaultId: vaultId, blobId: blobId)
            return try r.read(offset: 0, count: Int(r.plaintextSize))
        }
    }

    private func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    private func expectAuthenticationFailure(_ expression: @autoclosure () throws -> some Any, _ message: String,
                                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsCryptoError(try expression(), message, file: file, line: line) {
            if case CryptoError.authenticationFailed = $0 { true } else { false }
        }
    }

    // MARK: Round trips

    func testRoundTripSizes() throws {
        let s = smallSegment
        for size in [0, 1, s - 1, s, s + 1, 3 * s, 3 * s + 77, random.int(1...(5 * s))] {
            let plaintext = random.bytes(size)
            for chunk in [nil, 1000, s, s + 1] as [Int?] {
                let (blob, digest) = try seal(plaintext, segmentSize: s, chunk: chunk)
                let segments = max(1, (size + s - 1) / s)
                XCTAssertEqual(blob.count, SealedBlobHeader.size + size + 16 * segments, "size \(size)")
                XCTAssertEqual(digest, sha256(plaintext))
                try withFile(blob) { fd, fileSize in
                    let r = try reader(fd, fileSize)
                    XCTAssertEqual(r.plaintextSize, UInt64(size))
                    XCTAssertEqual(r.segmentCount, segments)
                    XCTAssertEqual(r.header.segmentSize, s)
                    XCTAssertEqual(r.header.keyEpoch, 1)
                    XCTAssertEqual(try r.read(offset: 0, count: size + 10), plaintext, "size \(size) chunk \(String(describing: chunk))")
                    var streamed: [UInt8] = []
                    try r.stream { piece in
                        XCTAssertLessThanOrEqual(piece.count, s)
                        streamed.append(contentsOf: piece)
                    }
                    XCTAssertEqual(streamed, plaintext)
                }
            }
        }
    }

    /// A size hint sizes the writer's buffers only: a blob smaller, equal to or larger than its
    /// hint comes out byte for byte as one written without a hint would read back.
    func testASizeHintChangesNothingButBuffers() throws {
        let s = smallSegment
        for (size, hint) in [(0, 0), (10, 10), (3 * s + 5, 1), (5 * s, UInt64(5 * s)), (s + 1, UInt64(10 * s))] as [(Int, UInt64)] {
            let plaintext = random.bytes(size)
            var blob: [UInt8] = []
            let writer = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 1, wrapKey: wrapKey, segmentSize: s,
                                              sizeHint: hint) { blob.append(contentsOf: $0) }
            for piece in stride(from: 0, to: size, by: 777) { try writer.write(Array(plaintext[piece..<min(piece + 777, size)])) }
            XCTAssertEqual(try writer.finish(), UInt64(size))
            XCTAssertEqual(writer.plaintextSHA256, sha256(plaintext))
            XCTAssertEqual(blob.count, SealedBlobHeader.size + size + 16 * max(1, (size + s - 1) / s), "size \(size) hint \(hint)")
            XCTAssertEqual(try openAll(blob), plaintext, "size \(size) hint \(hint)")
        }
    }

    func testDefaultSegmentSizeAndHeaderFields() throws {
        let plaintext = random.bytes(200_000)
        var blob: [UInt8] = []
        let writer = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 0xDEAD_BEEF, wrapKey: wrapKey) { blob += $0 }
        try plaintext.withUnsafeBytes { try writer.write($0) }
        _ = try writer.finish()
        XCTAssertThrowsError(try writer.write([1]))
        XCTAssertThrowsError(try writer.finish())
        XCTAssertEqual(Array(blob[0..<8]), Array("VAULTBLB".utf8))
        XCTAssertEqual(Array(blob[8..<16]), [1, 1, 0, 0, 0, 1, 0, 0])
        XCTAssertEqual(Array(blob[16..<32]), vaultId)
        XCTAssertEqual(Array(blob[32..<48]), blobId)
        XCTAssertEqual(Array(blob[48..<52]), [0xDE, 0xAD, 0xBE, 0xEF])
        let header = try SealedBlobHeader(bytes: blob)
        XCTAssertEqual(header.segmentSize, SealedBlobHeader.defaultSegmentSize)
        XCTAssertEqual(header.keyEpoch, 0xDEAD_BEEF)
        XCTAssertEqual(try header.unwrapDataKey(wrapKey: wrapKey).count, 32)
        XCTAssertEqual(try openAll(blob), plaintext)
    }

    /// Each segment decrypts with the documented nonce and AAD, independently of the reader.
    func testSegmentLayoutMatchesSpecification() throws {
        let s = smallSegment
        let plaintext = random.bytes(2 * s + 5)
        let (blob, _) = try seal(plaintext, segmentSize: s)
        let header = try SealedBlobHeader(bytes: blob)
        let dataKey = try AESGCMKey(header.unwrapDataKey(wrapKey: wrapKey))
        var offset = SealedBlobHeader.size
        for index in 0..<3 {
            let length = index < 2 ? s + 16 : 5 + 16
            let nonce = [0, 0, 0, 0] + withUnsafeBytes(of: UInt64(index).bigEndian, Array.init)
            let aad = Array(blob[0..<48]) + withUnsafeBytes(of: UInt64(index).bigEndian, Array.init) + [index == 2 ? 1 : 0]
            let opened = try dataKey.open(nonce: nonce, ciphertextAndTag: Array(blob[offset..<offset + length]), aad: aad)
            XCTAssertEqual(opened.withUnsafeBytes { Array($0) }, Array(plaintext[index * s..<min((index + 1) * s, plaintext.count)]))
            offset += length
        }
        XCTAssertEqual(offset, blob.count)
    }

    func testRandomAccessReads() throws {
        let s = smallSegment
        let plaintext = random.bytes(7 * s + 123)
        let (blob, _) = try seal(plaintext, segmentSize: s)
        try withFile(blob) { fd, size in
            let r = try reader(fd, size)
            for _ in 0..<300 {
                let offset = random.int(0...plaintext.count + 10)
                let count = random.int(0...3 * s)
                let end = min(offset + count, plaintext.count)
                let expected = offset < plaintext.count ? Array(plaintext[offset..<end]) : []
                // Readahead advice anywhere (past the end, of any length) changes nothing read.
                r.willNeed(offset: UInt64(offset), length: random.int(0...1) == 0 ? UInt64(count) : .max)
                XCTAssertEqual(try r.read(offset: UInt64(offset), count: count), expected, "offset \(offset) count \(count)")
                var streamed: [UInt8] = []
                try r.stream(from: UInt64(offset), length: UInt64(count)) { streamed += $0 }
                XCTAssertEqual(streamed, expected, "stream offset \(offset) count \(count)")
            }
            var tail: [UInt8] = []
            try r.stream(from: UInt64(plaintext.count - 10)) { tail += $0 }
            XCTAssertEqual(tail, Array(plaintext.suffix(10)))
            XCTAssertThrowsError(try r.read(offset: 0, count: -1))
        }
    }

    // MARK: Tampering

    /// One flipped bit anywhere in the file (header or any segment) must make opening or reading
    /// throw; it must never yield plaintext.
    func testEveryFlippedByteIsDetected() throws {
        let s = smallSegment
        let plaintext = random.bytes(2 * s + 100)
        let (blob, _) = try seal(plaintext, segmentSize: s)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vault-crypto-flip-\(UUID().uuidString).blob")
        try Data(blob).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let fd = open(url.path, O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var undetected: [Int] = []
        for position in 0..<blob.count {
            var flipped = blob[position] ^ (1 << UInt8(position % 8))
            XCTAssertEqual(pwrite(fd, &flipped, 1, off_t(position)), 1)
            var delivered = false
            do {
                let r = try reader(fd, UInt64(blob.count))
                _ = try r.read(offset: 0, count: Int(r.plaintextSize))
                delivered = true
            } catch {}
            if delivered { undetected.append(position) }
            var original = blob[position]
            XCTAssertEqual(pwrite(fd, &original, 1, off_t(position)), 1)
        }
        XCTAssertEqual(undetected, [], "flips not detected")
        // And the restored file still opens.
        let r = try reader(fd, UInt64(blob.count))
        XCTAssertEqual(try r.read(offset: 0, count: plaintext.count), plaintext)
    }

    func testTruncationIsDetected() throws {
        let s = smallSegment
        let plaintext = random.bytes(3 * s + 50)
        let (blob, _) = try seal(plaintext, segmentSize: s)
        let stride = s + 16
        // At segment boundaries: drop the final segment, then the last two.
        for keptSegments in [3, 2, 1] {
            let truncated = Array(blob.prefix(SealedBlobHeader.size + keptSegments * stride))
            expectAuthenticationFailure(try openAll(truncated), "kept \(keptSegments) whole segments")
        }
        // Mid-segment and inside a tag, and shorter than header + tag.
        for cut in [1, 10, 16, 49, 50 + 16 + 1, 50 + 16 + 100, blob.count - SealedBlobHeader.size - 15, blob.count - 100] {
            XCTAssertThrowsError(try openAll(Array(blob.dropLast(cut))), "cut \(cut)")
        }
        XCTAssertThrowsError(try openAll(Array(blob.prefix(SealedBlobHeader.size))))
        XCTAssertThrowsError(try openAll(Array(blob.prefix(50))))
        // Appended bytes are detected too.
        XCTAssertThrowsError(try openAll(blob + [0]))
        XCTAssertThrowsError(try openAll(blob + [UInt8](repeating: 0, count: stride)))
    }

    /// A file that claims n > 1 segments but ends in a bare tag is malformed.
    func testEmptyFinalSegmentAfterOthersIsInvalidFormat() throws {
        let s = smallSegment
        let (blob, _) = try seal(random.bytes(s), segmentSize: s)
        let padded = blob + [UInt8](repeating: 0, count: 16)
        XCTAssertThrowsCryptoError(try openAll(padded)) {
            if case CryptoError.invalidFormat = $0 { true } else { false }
        }
    }

    func testSwappedSegmentsAreDetected() throws {
        let s = smallSegment
        let plaintext = random.bytes(3 * s + 10)
        let (blob, _) = try seal(plaintext, segmentSize: s)
        let stride = s + 16
        let first = SealedBlobHeader.size
        var swapped = blob
        swapped.replaceSubrange(first..<first + stride, with: blob[first + stride..<first + 2 * stride])
        swapped.replaceSubrange(first + stride..<first + 2 * stride, with: blob[first..<first + stride])
        expectAuthenticationFailure(try openAll(swapped), "swapped segments 0 and 1")
        // A segment lifted from another blob with the same key material is still foreign.
        let (other, _) = try seal(plaintext, segmentSize: s, blobId: [UInt8](repeating: 0x77, count: 16))
        var spliced = blob
        spliced.replaceSubrange(first..<first + stride, with: other[first..<first + stride])
        expectAuthenticationFailure(try openAll(spliced), "segment from another blob")
    }

    func testBlobUnderAnotherIdentityIsDetected() throws {
        let (blob, _) = try seal(random.bytes(5000), segmentSize: smallSegment)
        let otherBlob = [UInt8](repeating: 0x99, count: 16)
        let otherVault = [UInt8](repeating: 0x98, count: 16)
        XCTAssertThrowsCryptoError(try openAll(blob, blobId: otherBlob)) {
            if case CryptoError.authenticationFailed(let message) = $0 { message.contains("belongs to") } else { false }
        }
        expectAuthenticationFailure(try openAll(blob, vaultId: otherVault), "other vault")
        // Rewriting the ids in the header to match does not help: the wrap AAD covers them.
        var relabelled = blob
        relabelled.replaceSubrange(32..<48, with: otherBlob)
        expectAuthenticationFailure(try openAll(relabelled, blobId: otherBlob), "relabelled blob id")
        relabelled = blob
        relabelled.replaceSubrange(16..<32, with: otherVault)
        expectAuthenticationFailure(try openAll(relabelled, vaultId: otherVault), "relabelled vault id")
    }

    func testWrongWrapKey() throws {
        let (blob, _) = try seal(random.bytes(100), segmentSize: smallSegment)
        expectAuthenticationFailure(try openAll(blob, key: SecureBytes.random(count: 32)), "wrong key")
        XCTAssertThrowsError(try openAll(blob, key: SecureBytes.random(count: 16)))
    }

    func testRewrapRoundTrip() throws {
        let plaintext = random.bytes(3 * smallSegment + 1)
        let (blob, _) = try seal(plaintext, segmentSize: smallSegment, keyEpoch: 4)
        let newKey = SecureBytes.random(count: 32)
        let newHeader = try SealedBlobHeader.rewrap(headerBytes: Array(blob.prefix(SealedBlobHeader.size)),
                                                    oldWrapKey: wrapKey, newWrapKey: newKey, newEpoch: 5)
        XCTAssertEqual(newHeader.count, SealedBlobHeader.size)
        XCTAssertEqual(Array(newHeader[0..<48]), Array(blob[0..<48]))
        XCTAssertNotEqual(Array(newHeader[52..<64]), Array(blob[52..<64]), "fresh wrap nonce")
        let rewrapped = newHeader + blob.dropFirst(SealedBlobHeader.size)
        XCTAssertEqual(try openAll(rewrapped, key: newKey), plaintext)
        XCTAssertEqual(try SealedBlobHeader(bytes: rewrapped).keyEpoch, 5)
        expectAuthenticationFailure(try openAll(rewrapped), "old key after rewrap")
        XCTAssertThrowsError(try SealedBlobHeader.rewrap(headerBytes: Array(blob.prefix(SealedBlobHeader.size)),
                                                         oldWrapKey: newKey, newWrapKey: newKey, newEpoch: 6))
        XCTAssertThrowsError(try SealedBlobHeader.rewrap(headerBytes: Array(blob.prefix(100)),
                                                         oldWrapKey: wrapKey, newWrapKey: newKey, newEpoch: 6))
        // The epoch is authenticated by the wrap: changing it alone breaks the unwrap.
        var epochChanged = rewrapped
        epochChanged[51] ^= 1
        expectAuthenticationFailure(try openAll(epochChanged, key: newKey), "epoch edited")
    }

    func testStreamStopsBeforeBadSegment() throws {
        let s = smallSegment
        let plaintext = random.bytes(5 * s + 9)
        let (blob, _) = try seal(plaintext, segmentSize: s)
        var corrupted = blob
        corrupted[SealedBlobHeader.size + 2 * (s + 16) + 100] ^= 0x40   // inside segment 2
        try withFile(corrupted) { fd, size in
            let r = try reader(fd, size)
            var delivered: [UInt8] = []
            XCTAssertThrowsCryptoError(try r.stream { delivered += $0 }) {
                if case CryptoError.authenticationFailed(let message) = $0 { message.contains("segment 2 of blob") } else { false }
            }
            XCTAssertEqual(delivered, Array(plaintext[0..<2 * s]), "only segments 0 and 1 may be delivered")
            // Starting inside the bad segment delivers nothing.
            var none: [UInt8] = []
            XCTAssertThrowsError(try r.stream(from: UInt64(2 * s + 5)) { none += $0 })
            XCTAssertEqual(none, [])
            // Reads that avoid the bad segment still work; reads touching it throw.
            XCTAssertEqual(try r.read(offset: UInt64(3 * s), count: s), Array(plaintext[3 * s..<4 * s]))
            XCTAssertThrowsError(try r.read(offset: UInt64(2 * s - 10), count: 20))
        }
    }

    func testHeaderValidation() throws {
        let (blob, _) = try seal([1, 2, 3], segmentSize: smallSegment)
        let header = Array(blob.prefix(SealedBlobHeader.size))
        func expectInvalidFormat(_ bytes: [UInt8], _ message: String) {
            XCTAssertThrowsCryptoError(try SealedBlobHeader(bytes: bytes), message) {
                if case CryptoError.invalidFormat = $0 { true } else { false }
            }
        }
        expectInvalidFormat(Array(header.prefix(111)), "short")
        var bad = header; bad[0] = UInt8(ascii: "X"); expectInvalidFormat(bad, "magic")
        bad = header; bad[8] = 2; expectInvalidFormat(bad, "version")
        bad = header; bad[9] = 2; expectInvalidFormat(bad, "algorithm")
        bad = header; bad[11] = 1; expectInvalidFormat(bad, "reserved")
        bad = header; bad.replaceSubrange(12..<16, with: [0, 0, 0x0F, 0xFF]); expectInvalidFormat(bad, "segment too small")
        bad = header; bad.replaceSubrange(12..<16, with: [0x01, 0, 0, 1]); expectInvalidFormat(bad, "segment too large")
        XCTAssertThrowsError(try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 0, wrapKey: wrapKey, segmentSize: 1000) { _ in })
        XCTAssertThrowsError(try SealedBlobWriter(vaultId: [1], blobId: blobId, keyEpoch: 0, wrapKey: wrapKey) { _ in })
    }

    func testWriterPropagatesSinkErrorsAndRefusesReuse() throws {
        struct SinkFull: Error {}
        let writer = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 0, wrapKey: wrapKey, segmentSize: smallSegment) { _ in
            throw SinkFull()
        }
        try writer.write([1, 2, 3])
        XCTAssertThrowsError(try writer.finish()) { XCTAssertTrue($0 is SinkFull) }
        XCTAssertThrowsError(try writer.write([4]))
        XCTAssertNil(writer.plaintextSHA256)
    }
}
