import Foundation
import XCTest
@testable import VaultCrypto

/// One segment of a sealed blob authenticated alone (on-demand reads, SECURITY.md "Sparse partial
/// downloads"): every segment of a real blob opens at its own index and range; a segment at
/// another index, with a flipped bit, or taken for the final one (or the final one for another)
/// does not; a header of another blob or under another key is refused before any segment.
final class SealedSegmentVerifierTests: XCTestCase {
    let vaultId = [UInt8](repeating: 0x5A, count: 16)
    let blobId = Array(0x40..<0x50).map { UInt8($0) }
    let wrapKey = SecureBytes.random(count: 32)
    let s = 4096

    private func seal(_ plaintext: [UInt8]) throws -> [UInt8] {
        try sealedBlob(plaintext, vaultId: vaultId, blobId: blobId, wrapKey: wrapKey, segmentSize: s)
    }

    private func verifier(_ blob: [UInt8], blobId: [UInt8]? = nil, key: SecureBytes? = nil) throws -> SealedSegmentVerifier {
        try SealedSegmentVerifier(headerBytes: Array(blob[0..<SealedBlobHeader.size]), sealedSize: UInt64(blob.count),
                                  wrapKeyForEpoch: { _ in key ?? self.wrapKey }, expectedVaultId: vaultId,
                                  expectedBlobId: blobId ?? self.blobId)
    }

    private func segment(_ blob: [UInt8], _ v: SealedSegmentVerifier, _ i: Int) -> [UInt8] {
        let r = v.ciphertextRange(of: i)
        return Array(blob[Int(r.lowerBound)..<Int(r.upperBound)])
    }

    func testEverySegmentOpensAloneAtItsIndexAndNowhereElse() throws {
        for size in [0, 1, s, s + 1, 5 * s + 7] {
            let blob = try seal((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let v = try verifier(blob)
            XCTAssertEqual(v.segmentCount, max(1, (size + s - 1) / s))
            XCTAssertEqual(v.ciphertextRange(of: v.segmentCount - 1).upperBound, UInt64(blob.count))
            for i in 0..<v.segmentCount {
                try segment(blob, v, i).withUnsafeBytes { try v.verify(index: i, sealed: $0) }
            }
            guard v.segmentCount >= 3 else { continue }
            // Segment 1 offered as segment 0 (same length): its index is in the nonce and AAD.
            XCTAssertThrowsError(try segment(blob, v, 1).withUnsafeBytes { try v.verify(index: 0, sealed: $0) })
            var flipped = segment(blob, v, 2)
            flipped[10] ^= 1
            XCTAssertThrowsError(try flipped.withUnsafeBytes { try v.verify(index: 2, sealed: $0) })
            // The final segment cut to a full one's length elsewhere: a wrong length is refused.
            XCTAssertThrowsError(try segment(blob, v, v.segmentCount - 1).withUnsafeBytes { try v.verify(index: 1, sealed: $0) })
        }
    }

    func testTheLastFlagIsBoundToTheRecordsLength() throws {
        // A blob of exactly two full segments, verified as if the record said it had three: the
        // second segment is not final there, so its last flag does not match.
        let blob = try seal([UInt8](repeating: 1, count: 2 * s))
        let longer = try SealedSegmentVerifier(headerBytes: Array(blob[0..<SealedBlobHeader.size]), sealedSize: UInt64(blob.count + 16 + 1),
                                               wrapKeyForEpoch: { _ in self.wrapKey }, expectedVaultId: vaultId, expectedBlobId: blobId)
        let v = try verifier(blob)
        try segment(blob, v, 1).withUnsafeBytes { try v.verify(index: 1, sealed: $0) }
        XCTAssertThrowsError(try segment(blob, v, 1).withUnsafeBytes { try longer.verify(index: 1, sealed: $0) })
    }

    func testAHeaderOfAnotherBlobOrUnderAnotherKeyIsRefused() throws {
        let blob = try seal([UInt8](repeating: 2, count: 3 * s))
        XCTAssertThrowsError(try verifier(blob, blobId: [UInt8](repeating: 9, count: 16)))
        XCTAssertThrowsError(try verifier(blob, key: SecureBytes.random(count: 32)))
        var header = blob
        header[40] ^= 1   // inside the blob id, covered by the key wrap's AAD
        XCTAssertThrowsError(try verifier(header))
    }

    func testTheSegmentsOfAPlaintextRange() throws {
        let blob = try seal([UInt8](repeating: 3, count: 4 * s + 100))
        let v = try verifier(blob)
        XCTAssertEqual(v.segments(plaintextOffset: 0, count: 1), 0...0)
        XCTAssertEqual(v.segments(plaintextOffset: UInt64(s - 1), count: 2), 0...1)
        XCTAssertEqual(v.segments(plaintextOffset: UInt64(2 * s + 5), count: 4096), 2...3)
        XCTAssertEqual(v.segments(plaintextOffset: UInt64(4 * s), count: 100), 4...4, "a read reaching the end opens the final segment")
        XCTAssertEqual(v.segments(plaintextOffset: UInt64(3 * s), count: 1 << 20), 3...4)
        XCTAssertEqual(v.segments(plaintextOffset: 1 << 30, count: 10), 4...4, "past the end: the final segment")
    }
}
