import XCTest
@testable import VaultCrypto

final class HKDFTests: XCTestCase {
    struct HKDFTest: Decodable {
        let tcId: Int
        let ikm, salt, info: String
        let size: Int
        let okm: String
        let result: String
    }

    func testWycheproofHKDF() throws {
        typealias Derive = (SecureBytes, [UInt8], [UInt8], Int) throws -> SecureBytes
        let cases: [(String, Derive, Int)] = [
            ("wycheproof_hkdf_sha256_test.json", { try HKDF.sha256(ikm: $0, salt: $1, info: $2, length: $3) }, 86),
            ("wycheproof_hkdf_sha512_test.json", { try HKDF.sha512(ikm: $0, salt: $1, info: $2, length: $3) }, 83),
        ]
        for (name, derive, expected) in cases {
            let file: WycheproofFile<HKDFTest> = try Vectors.load(name)
            let tests = file.testGroups.flatMap(\.tests)
            XCTAssertEqual(tests.count, expected, name)
            var invalid = 0
            for test in tests {
                let run = {
                    try derive(SecureBytes(copying: [UInt8](hex: test.ikm)), [UInt8](hex: test.salt), [UInt8](hex: test.info), test.size)
                }
                if test.result == "valid" {
                    XCTAssertEqual(try run().withUnsafeBytes { Array($0) }.hex, test.okm, "\(name) tcId \(test.tcId)")
                } else {
                    invalid += 1
                    XCTAssertThrowsCryptoError(try run(), "\(name) tcId \(test.tcId)") {
                        if case CryptoError.invalidParameter = $0 { true } else { false }
                    }
                }
            }
            XCTAssertEqual(invalid, 3, name)
        }
    }

    /// RFC 4231 test case 2 (short key) and 6 (key longer than the block).
    func testHMACSHA256() {
        XCTAssertEqual(HMACSHA256.authenticate(key: SecureBytes(copying: Array("Jefe".utf8)),
                                               message: Array("what do ya want for nothing?".utf8)).hex,
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertEqual(HMACSHA256.authenticate(key: SecureBytes(copying: [UInt8](repeating: 0xaa, count: 131)),
                                               message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)).hex,
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testSHA256() {
        var hasher = SHA256Hasher()
        XCTAssertEqual(hasher.finalize().hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        hasher.update(Array("a".utf8))
        hasher.update(Array("bc".utf8)[...])
        XCTAssertEqual(hasher.finalize().hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Reusable after finalize; raw-buffer update.
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        million.withUnsafeBytes { hasher.update($0) }
        XCTAssertEqual(hasher.finalize().hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // Value semantics: a copy continues independently.
        hasher.update(Array("a".utf8))
        var copy = hasher
        copy.update(Array("bc".utf8))
        XCTAssertEqual(copy.finalize().hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hasher.finalize().hex, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb")
    }
}
