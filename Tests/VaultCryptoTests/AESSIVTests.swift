import XCTest
@testable import VaultCrypto

/// AES-SIV against every Wycheproof deterministic AES-SIV-CMAC vector (RFC 5297 included), all
/// three key sizes: valid vectors seal to exactly `ct` and open back; invalid ones never open.
final class AESSIVTests: XCTestCase {
    struct Case: Decodable { let tcId: Int; let key: String; let aad: String; let msg: String; let ct: String; let result: String }

    func testWycheproofDeterministicVectors() throws {
        let file: WycheproofFile<Case> = try Vectors.load("wycheproof_aes_siv_cmac_test.json")
        var valid = 0, invalid = 0, skippedEmpty = 0
        for group in file.testGroups {
            for t in group.tests {
                let key = SecureBytes(copying: [UInt8](hex: t.key))
                let aad = [[UInt8](hex: t.aad)]
                let msg = [UInt8](hex: t.msg), ct = [UInt8](hex: t.ct)
                let keyUsable = [32, 48, 64].contains(key.count)
                if t.result == "valid" {
                    guard !msg.isEmpty else {
                        // OpenSSL 3.0 cannot do SIV over an empty plaintext; vault never seals one.
                        XCTAssertThrowsError(try AESSIV.seal(key: key, plaintext: msg, associatedData: aad))
                        skippedEmpty += 1; continue
                    }
                    XCTAssertTrue(keyUsable, "tc \(t.tcId)")
                    XCTAssertEqual(try AESSIV.seal(key: key, plaintext: msg, associatedData: aad).hex, t.ct, "tc \(t.tcId)")
                    XCTAssertEqual(try AESSIV.open(key: key, sealed: ct, associatedData: aad).hex, t.msg, "tc \(t.tcId)")
                    valid += 1
                } else {
                    XCTAssertThrowsError(try AESSIV.open(key: key, sealed: ct, associatedData: aad), "tc \(t.tcId) must not open")
                    invalid += 1
                }
            }
        }
        XCTAssertEqual(valid + invalid + skippedEmpty, file.numberOfTests)
        XCTAssertGreaterThan(valid, 90)
        XCTAssertGreaterThan(invalid, 300)
    }

    func testAssociatedDataComponentsAreSeparateAndOrdered() throws {
        let key = SecureBytes.random(count: 64)
        let sealed = try AESSIV.seal(key: key, plaintext: Array("report.pdf".utf8), associatedData: [[1, 2], [3]])
        XCTAssertEqual(try AESSIV.seal(key: key, plaintext: Array("report.pdf".utf8), associatedData: [[1, 2], [3]]), sealed, "deterministic")
        XCTAssertEqual(String(decoding: try AESSIV.open(key: key, sealed: sealed, associatedData: [[1, 2], [3]]), as: UTF8.self), "report.pdf")
        for other: [[UInt8]] in [[[1], [2, 3]], [[3], [1, 2]], [[1, 2, 3]], [[1, 2]], [[1, 2], [3], []], []] {
            XCTAssertThrowsError(try AESSIV.open(key: key, sealed: sealed, associatedData: other), "\(other)")
        }
        for i in sealed.indices {
            var flipped = sealed; flipped[i] ^= 0x80
            XCTAssertThrowsError(try AESSIV.open(key: key, sealed: flipped, associatedData: [[1, 2], [3]]), "byte \(i)")
        }
        XCTAssertThrowsError(try AESSIV.open(key: SecureBytes.random(count: 64), sealed: sealed, associatedData: [[1, 2], [3]]))
        XCTAssertThrowsError(try AESSIV.seal(key: SecureBytes.random(count: 16), plaintext: [1], associatedData: []))
    }
}
