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
        try Array(sealed.dropLast(16 + 100)).withUnsafeBytes { m in
            let r = try SealedBlobReader(memory: m, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
            XCTAssertThrowsError(try r.stream { _ in })    // truncated at a segment boundary
        }
    }
}
