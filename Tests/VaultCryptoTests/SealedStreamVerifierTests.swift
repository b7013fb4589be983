import Foundation
import XCTest
import VaultTestSupport
@testable import VaultCrypto

/// Sealed bytes arriving from a server are authenticated segment by segment against the length an
/// authenticated record promised: every truncation, extension, reorder, splice or foreign header
/// fails, and nothing is accepted before the final segment opens with `last = 1`.
final class SealedStreamVerifierTests: XCTestCase {
    let vaultId = [UInt8](repeating: 0x11, count: 16)
    let blobId = [UInt8](repeating: 0x22, count: 16)
    let wrapKey = SecureBytes.random(count: 32)
    var random = SeededGenerator(seed: 7)

    func seal(_ plaintext: [UInt8], blobId: [UInt8]? = nil, epoch: UInt32 = 1, key: SecureBytes? = nil) throws -> [UInt8] {
        var blob: [UInt8] = []
        let w = try SealedBlobWriter(vaultId: vaultId, blobId: blobId ?? self.blobId, keyEpoch: epoch, wrapKey: key ?? wrapKey,
                                     segmentSize: 4096) { blob.append(contentsOf: $0) }
        try w.write(plaintext)
        _ = try w.finish()
        return blob
    }

    func verify(_ sealed: [UInt8], length: Int? = nil, chunk: Int = 1000, keys: [UInt32: SecureBytes]? = nil) throws -> (UInt64, [UInt8]) {
        let v = try SealedStreamVerifier(expectedLength: UInt64(length ?? sealed.count), expectedVaultId: vaultId, expectedBlobId: blobId) { epoch in
            guard let k = (keys ?? [1: self.wrapKey])[epoch] else { throw CryptoError.authenticationFailed("no key for epoch \(epoch)") }
            return k
        }
        var i = 0
        while i < sealed.count {
            let end = min(sealed.count, i + chunk)
            try v.feed(Array(sealed[i..<end]))
            i = end
        }
        let r = try v.finish()
        return (r.plaintextSize, r.sha256)
    }

    func sha(_ b: [UInt8]) -> [UInt8] { var h = SHA256Hasher(); h.update(b); return h.finalize() }

    func testEverySegmentCountAndChunkingVerifies() throws {
        for size in [0, 1, 4095, 4096, 4097, 8192, 3 * 4096 + 5, 70 * 4096] {
            let plain = random.bytes(size)
            let sealed = try seal(plain)
            for chunk in [1, 17, 4112, 100_000] where !(chunk == 1 && size > 10_000) {
                let (n, digest) = try verify(sealed, chunk: chunk)
                XCTAssertEqual(n, UInt64(size)); XCTAssertEqual(digest, sha(plain), "size \(size) chunk \(chunk)")
            }
        }
    }

    func testTruncationExtensionAndWrongLengthFail() throws {
        for size in [0, 10, 4096, 4096 * 2 + 3] {
            let sealed = try seal(random.bytes(size))
            // Every shorter prefix, claimed as the whole blob, or fed against the true length.
            for cut in Set([0, 1, 111, 112, 113, 127, 128, sealed.count - 17, sealed.count - 16, sealed.count - 1, 112 + 4112, 112 + 4112 + 16])
                where cut >= 0 && cut < sealed.count {
                XCTAssertThrowsError(try verify(Array(sealed[..<cut]), length: cut), "size \(size): cut at \(cut) claimed whole")
                XCTAssertThrowsError(try verify(Array(sealed[..<cut]), length: sealed.count), "size \(size): cut at \(cut)")
            }
            XCTAssertThrowsError(try verify(sealed + [0], length: sealed.count), "one byte more than the record")
            XCTAssertThrowsError(try verify(sealed + [UInt8](repeating: 0, count: 16), length: sealed.count + 16), "an empty segment appended")
        }
    }

    func testReorderSpliceForeignHeaderAndFlippedBytesFail() throws {
        let plain = random.bytes(4096 * 3)
        let sealed = try seal(plain)
        let stride = 4096 + 16
        var swapped = sealed
        swapped.replaceSubrange(112..<112 + stride, with: sealed[112 + stride..<112 + 2 * stride])
        swapped.replaceSubrange(112 + stride..<112 + 2 * stride, with: sealed[112..<112 + stride])
        XCTAssertThrowsError(try verify(swapped), "segments reordered")
        let other = try seal(random.bytes(4096 * 3))   // same ids, another data key
        var spliced = sealed
        spliced.replaceSubrange(112 + stride..<112 + 2 * stride, with: other[112 + stride..<112 + 2 * stride])
        XCTAssertThrowsError(try verify(spliced), "segment from another blob")
        XCTAssertThrowsError(try verify(try seal(plain, blobId: [UInt8](repeating: 0x33, count: 16))), "another blob id")
        for i in Swift.stride(from: 0, to: sealed.count, by: 97) {
            var flipped = sealed; flipped[i] ^= 0xff
            XCTAssertThrowsError(try verify(flipped), "byte \(i) flipped")
        }
    }

    func testHeaderEpochChoosesTheWrapKey() throws {
        let k2 = SecureBytes.random(count: 32)
        let plain = random.bytes(100)
        let sealed = try seal(plain, epoch: 2, key: k2)
        XCTAssertEqual(try verify(sealed, keys: [1: wrapKey, 2: k2]).1, sha(plain))
        XCTAssertThrowsError(try verify(sealed, keys: [1: wrapKey]), "unknown epoch")
        XCTAssertThrowsError(try verify(sealed, keys: [2: wrapKey]), "wrong key for the epoch")
    }
}
