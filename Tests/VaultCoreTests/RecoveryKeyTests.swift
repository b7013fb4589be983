import XCTest
import VaultCrypto
import VaultKeys

/// The recovery key's printable form: 11 groups of 5 over key ‖ 2 checksum bytes, typed back in
/// any case and with any separators; a typo is caught by the checksum.
final class RecoveryKeyTests: XCTestCase {
    func testFormatAndParseRoundTripAndCatchTypos() throws {
        for _ in 0..<50 {
            let key = RecoveryKey.generate()
            let text = RecoveryKey.format(key)
            XCTAssertEqual(text.count, 65)
            XCTAssertEqual(text.split(separator: "-").map(\.count), Array(repeating: 5, count: 11))
            let back = try RecoveryKey.parse(SecureBytes(copying: Array(text.utf8)))
            XCTAssertTrue(back.constantTimeEquals(key))
            let loose = text.lowercased().replacingOccurrences(of: "-", with: " ") + "\n"
            XCTAssertTrue(try RecoveryKey.parse(SecureBytes(copying: Array(loose.utf8))).constantTimeEquals(key))
            var typo = Array(text.utf8)
            typo[7] = typo[7] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            XCTAssertThrowsError(try RecoveryKey.parse(SecureBytes(copying: typo)))
        }
        // A known key prints a known text (the format is fixed: keys printed before must still parse).
        // (Python: base64.b32encode(k + sha256(k)[:2]) of k = bytes(range(32)), grouped by 5.)
        let counting = SecureBytes(copying: (0..<32).map { UInt8($0) })
        let known = "AAAQE-AYEAU-DAOCA-JBIFQ-YDIOB-4IBCE-QTCQK-RMFYY-DENBW-HA5DY-PWGDI"
        XCTAssertEqual(RecoveryKey.format(counting), known)
        XCTAssertTrue(try RecoveryKey.parse(SecureBytes(copying: Array(known.utf8))).constantTimeEquals(counting))
        XCTAssertThrowsError(try RecoveryKey.parse(SecureBytes(copying: Array("ABCDE".utf8)))) {
            XCTAssertTrue("\($0)".contains("55 characters"), "\($0)")
        }
        XCTAssertThrowsError(try RecoveryKey.parse(SecureBytes(copying: Array(String(repeating: "A", count: 56).utf8))))
        XCTAssertThrowsError(try RecoveryKey.parse(SecureBytes(copying: Array("AAAA1".utf8)))) {
            XCTAssertTrue("\($0)".contains("A–Z"), "\($0)")
        }
    }
}
