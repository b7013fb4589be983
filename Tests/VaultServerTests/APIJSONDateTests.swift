import Foundation
import VaultAPI
import XCTest

/// The API's dates, formatted and parsed by arithmetic (APIJSON): the same strings as Foundation's
/// ISO 8601 formatter for seeded random dates from 1900 to 2200, and the neighbours of the format
/// refused.
final class APIJSONDateTests: XCTestCase {
    func testFormatAndParseAgreeWithFoundation() {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var seed: UInt64 = 0x5eed
        for _ in 0..<2000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let ms = Int64(seed >> 20) % 9_467_280_000_000 - 2_208_988_800_000   // 1900…2200
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let s = APIJSON.formatDate(date)
            XCTAssertEqual(s, f.string(from: date), "seed \(seed)")
            XCTAssertEqual(APIJSON.parseDate(s).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }, ms, s)
        }
    }

    func testParseAcceptsRFC3339AndRefusesTheRest() {
        XCTAssertEqual(APIJSON.parseDate("2026-11-29T12:00:00Z")?.timeIntervalSince1970, 1_795_953_600)
        XCTAssertEqual(APIJSON.parseDate("2026-11-29T12:00:00.5Z")?.timeIntervalSince1970, 1_795_953_600.5)
        XCTAssertEqual(APIJSON.parseDate("2026-11-29T13:30:00+01:30")?.timeIntervalSince1970, 1_795_953_600)
        XCTAssertEqual(APIJSON.parseDate("2024-02-29T00:00:00.000Z")?.timeIntervalSince1970, 1_709_164_800)
        for bad in ["", "2026-11-29", "2026-11-29T12:00:00", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
                    "2026-11-31T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T12:60:00Z", "2026-11-29T12:00:60Z",
                    "2026-11-29T12:00:00.Z", "2026-11-29T12:00:00Zx", "2026-11-29 12:00:00Z", "+2026-11-29T12:00:00Z",
                    "2026-11-29T12:00:00+0100", "２０２６-11-29T12:00:00Z"] {
            XCTAssertNil(APIJSON.parseDate(bad), bad)
        }
    }
}
