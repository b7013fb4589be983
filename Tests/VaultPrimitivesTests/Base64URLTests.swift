import Foundation
import VaultPrimitives
import XCTest

/// Base64url (by table): the same text as Foundation's base64 with the URL alphabet
/// and no padding, for every length 0…200 of seeded bytes; only canonical text decodes.
final class Base64URLTests: XCTestCase {
    func testAgreesWithFoundationAndRoundTrips() {
        var seed: UInt64 = 0xba5e
        for n in 0...200 {
            let bytes = (0..<n).map { _ -> UInt8 in seed = seed &* 6364136223846793005 &+ 1442695040888963407; return UInt8(seed >> 56) }
            let reference = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(Base64URL.encode(bytes), reference, "length \(n)")
            XCTAssertEqual(Base64URL.decode(reference), bytes, "length \(n)")
        }
    }

    func testOnlyCanonicalTextDecodes() {
        XCTAssertEqual(Base64URL.decode(""), [])
        XCTAssertEqual(Base64URL.decode("AA"), [0])
        XCTAssertNil(Base64URL.decode("AB"), "unused bits set: not what encoding [0] gives")
        XCTAssertNil(Base64URL.decode("AAB"), "unused bits set")
        XCTAssertNil(Base64URL.decode("A"), "a length no encoding has")
        for bad in ["AA==", "A+A/", "AA AA", "AA\n", "ÄAAA", "AA.A"] { XCTAssertNil(Base64URL.decode(bad), bad) }
    }
}
