import XCTest
@testable import VaultCLI

/// Where `put -r LOCAL DEST` puts the tree: as `cp -r`, and as rsync for `LOCAL/`.
final class PutTargetTests: XCTestCase {
    func target(_ local: String, _ dest: String?, folders: Set<String> = ["/", "/Docs"], files: Set<String> = ["/f.txt"]) throws -> String {
        try PutCommand.target(local: local, dest: dest) { p in folders.contains(p) ? true : files.contains(p) ? false : nil }
    }

    func testTheTreeGoesWhereCpPutsIt() throws {
        XCTAssertEqual(try target("photos", nil), "/photos")
        XCTAssertEqual(try target("/home/u/photos", "/Docs"), "/Docs/photos")
        XCTAssertEqual(try target("photos", "/Docs/"), "/Docs/photos")
        XCTAssertEqual(try target("photos", "/New"), "/New", "a new DEST is the copy")
        XCTAssertEqual(try target("photos", "/Docs/New/Deeper"), "/Docs/New/Deeper")
        XCTAssertThrowsError(try target("photos", "/f.txt"))
    }

    func testTrailingSlashAndDotCopyTheContents() throws {
        XCTAssertEqual(try target("photos/", "/Docs"), "/Docs")
        XCTAssertEqual(try target("photos/", nil), "/")
        XCTAssertEqual(try target(".", "/Docs"), "/Docs")
        XCTAssertEqual(try target("photos/.", "/Docs"), "/Docs")
        XCTAssertEqual(try target("/", "/Docs"), "/Docs")
    }

    func testDotDotUsesTheRealFolderName() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("pt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base.appendingPathComponent("album/2026"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        XCTAssertEqual(try target(base.path + "/album/2026/..", "/Docs"), "/Docs/album")
    }
}
