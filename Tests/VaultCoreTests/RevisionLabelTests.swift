import XCTest
@testable import VaultCore
@testable import VaultKeys

/// How `vault revisions` and the browser name the device that wrote a version.
final class RevisionLabelTests: XCTestCase {
    private func revision(device: String, name: String?) -> RevisionInfo {
        let c = ContentRecord(blob: "b", device: device, deviceName: name, mime: "m", mtime: 1, sealedSize: 1, seq: 1, sha256: "s", size: 1)
        return RevisionInfo(id: "r", time: 1, size: 1, sha256: "s", device: device, isHead: true, content: c, local: false)
    }

    func testAVersionIsNamedByTheNameItsWriterSealedElseByTheShortId() {
        XCTAssertEqual(revision(device: "e819c976aa55", name: "laptop").deviceLabel(thisDevice: "other"), "laptop")
        XCTAssertEqual(revision(device: "e819c976aa55", name: nil).deviceLabel(thisDevice: "other"), "device e819c976")
        XCTAssertEqual(revision(device: "e819c976aa55", name: "bad\u{1b}name").deviceLabel(thisDevice: "other"), "device e819c976")
        XCTAssertEqual(revision(device: "e819c976aa55", name: "laptop").deviceLabel(thisDevice: "e819c976aa55"), "this device")
    }
}
