import Foundation
import XCTest

/// A device's chosen name (`vault config set device-name`) reaches the other devices sealed in
/// the records it writes: revisions, conflicts and the browser name it, and the server never
/// sees it.
extension TwoWaySyncTests {
    func testTheOtherDevicesChosenNameIsShownInRevisionsAndConflicts() throws {
        let secretName = "desk-" + UUID().uuidString.prefix(8).lowercased()
        try b.ok(["config", "set", "device-name", secretName] + b.pw)
        try put(a, "/n.txt", "one")
        try sync(a)
        try sync(b)
        try put(b, "/n.txt", "two", replace: true)
        try sync(b)
        try sync(a)

        let text = try a.ok(["revisions", "/n.txt"] + a.pw).out
        XCTAssertTrue(text.contains(secretName), "B's revision is named by B's chosen name: \(text)")
        XCTAssertTrue(text.contains("this device"), text)
        XCTAssertNil(text.range(of: "device [0-9a-f]{8}", options: .regularExpression), "no device is named by its id: \(text)")
        let revs = try XCTUnwrap((try a.ok(["revisions", "/n.txt", "--json"] + a.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        let names = revs.compactMap { ($0["content"] as? [String: Any])?["deviceName"] as? String }
        XCTAssertEqual(Set(names), [secretName, "laptop-a"], "\(revs)")

        // Both edit: the device that loses the race is told who changed it.
        try put(a, "/n.txt", "three on a", replace: true)
        try put(b, "/n.txt", "three on b", replace: true)
        try sync(b)
        try sync(a)
        let conflicts = try XCTUnwrap(try a.ok(["conflicts", "--json"] + a.pw).json as? [[String: Any]])
        XCTAssertTrue(conflicts.contains { ($0["text"] as? String)?.contains("changed here and on \(secretName)") == true }, "\(conflicts)")

        // The server holds the records sealed: the name is nowhere in what it stores.
        for folder in try server.storedFolders() {
            XCTAssertEqual(filesContaining(secretName, under: folder), [], "the device name in clear")
        }
    }
}
