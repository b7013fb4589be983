import XCTest
import VaultSyncPlan

/// What a device's sealed name may be, and how listings fall back to the short id.
final class DeviceNameTests: XCTestCase {
    func testValidNamesAreShownAndOthersFallBackToTheShortId() {
        let id = "e819c976aa55bb33e819c976aa55bb33"
        XCTAssertEqual(DeviceName.label(id: id, name: "laptop"), "laptop")
        XCTAssertEqual(DeviceName.label(id: id, name: "Büro – Mac ✓"), "Büro – Mac ✓")
        XCTAssertEqual(DeviceName.label(id: id, name: nil), "device e819c976", "a device that never said")
        for bad in ["", "a/b", "tab\there", "esc\u{1b}[31m", "del\u{7f}", "c1\u{9b}", "bidi\u{202e}txt", "zw\u{200b}", "line\u{2028}",
                    String(repeating: "x", count: 65)] {
            XCTAssertFalse(DeviceName.isValid(bad), "\(bad.debugDescription)")
            XCTAssertEqual(DeviceName.label(id: id, name: bad), "device e819c976", "\(bad.debugDescription)")
        }
        XCTAssertTrue(DeviceName.isValid(String(repeating: "é", count: 64)))
    }
}
