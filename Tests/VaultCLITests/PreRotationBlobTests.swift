import Foundation
import XCTest

/// Issue 18, item 3: a copy of a blob taken before `vault key rotate` and put back afterwards is
/// refused by every reader of local content (SECURITY.md "Sealed blob format", reading rule 3):
/// exit 6, no plaintext out, nothing published. Without the copy everything still reads.
final class PreRotationBlobTests: XCTestCase {
    var h: CLIHarness!
    let first = Data("the first version, kept as a revision\n".utf8)
    let content = Data("the current content of the file\n".utf8)

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        try h.initVault()
        try h.ok(["put", try h.localFile("f1.txt", first), "/f.txt"] + h.pw)
        try h.ok(["put", "--replace", try h.localFile("f2.txt", content), "/f.txt"] + h.pw)
    }

    /// Every blob file of the vault folder, with its bytes.
    func blobSnapshot() throws -> [(URL, Data)] {
        try (h.blobFiles("staging") + h.blobFiles("cache")).map { ($0, try Data(contentsOf: $0)) }
    }

    /// Copies every blob out, rotates the master key, and puts the old copies back.
    func rotateAndPutTheOldBlobsBack() throws {
        let old = try blobSnapshot()
        XCTAssertFalse(old.isEmpty)
        try h.ok(["key", "rotate"] + h.pw)
        XCTAssertNotEqual(try blobSnapshot().map(\.1), old.map(\.1), "the rotation rewrapped the headers")
        for (url, bytes) in old { try bytes.write(to: url) }
    }

    func assertRefused(_ r: CLIHarness.Result, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 6, "\(what) accepted a pre-rotation blob: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains("key epoch 1"), "\(what) says why: \(r.stderr)", file: file, line: line)
        for secret in [content, first] {
            XCTAssertNil(r.stdout.range(of: secret), "\(what) released plaintext", file: file, line: line)
        }
    }

    func testCatRefusesAPreRotationBlob() throws {
        try rotateAndPutTheOldBlobsBack()
        assertRefused(try h.run(["cat", "/f.txt"] + h.pw), "cat")
    }

    func testGetRefusesAPreRotationBlobAndPublishesNothing() throws {
        try rotateAndPutTheOldBlobsBack()
        let target = h.root.appendingPathComponent("out.txt")
        assertRefused(try h.run(["get", "/f.txt", target.path] + h.pw), "get")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "nothing published")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path + ".vault-partial"), "no partial left")
    }

    func testRevisionReadRefusesAPreRotationBlob() throws {
        let list = try XCTUnwrap((try h.ok(["revisions", "/f.txt", "--json"] + h.pw).json as? [String: Any])?["revisions"] as? [[String: Any]])
        let old = try XCTUnwrap(list.first { $0["isHead"] as? Bool != true }?["id"] as? String, "the first version is a revision: \(list)")
        XCTAssertEqual(try h.ok(["cat", "--revision", old, "/f.txt"] + h.pw).stdout, first)
        try rotateAndPutTheOldBlobsBack()
        assertRefused(try h.run(["cat", "--revision", old, "/f.txt"] + h.pw), "cat --revision")
    }

    func testDoctorVerifyReportsAPreRotationBlob() throws {
        try rotateAndPutTheOldBlobsBack()
        let r = try h.run(["doctor", "--verify"] + h.pw)
        XCTAssertNotEqual(r.status, 0, "doctor --verify vouched for a pre-rotation blob: \(r.out)")
        XCTAssertTrue((r.out + r.stderr).contains("key epoch 1"), r.out + r.stderr)
    }

    func testBackupExportRefusesAPreRotationBlobAndWritesNothing() throws {
        try rotateAndPutTheOldBlobsBack()
        let pass = try h.localFile("backup-pass", Data("a backup passphrase\n".utf8))
        let bundle = h.root.appendingPathComponent("b.bundle")
        assertRefused(try h.run(["backup", "export", bundle.path, "--passphrase-file", pass, "--kdf-ops", "1", "--kdf-mem", "8M"] + h.pw),
                      "backup export")
        XCTAssertFalse(FileManager.default.fileExists(atPath: bundle.path), "no bundle written")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.root.path).filter { $0.hasPrefix("b.bundle") }, [])
    }

    func testReencryptRefusesAPreRotationBlob() throws {
        try rotateAndPutTheOldBlobsBack()
        assertRefused(try h.run(["key", "reencrypt"] + h.pw), "key reencrypt")
    }

    /// The control: a rotation alone changes nothing a reader sees.
    func testEveryReaderStillReadsAfterARotationWithoutTheCopy() throws {
        try h.ok(["key", "rotate"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/f.txt"] + h.pw).stdout, content)
        try h.ok(["doctor", "--verify"] + h.pw)
        try h.ok(["key", "reencrypt"] + h.pw)
        XCTAssertEqual(try h.ok(["cat", "/f.txt"] + h.pw).stdout, content)
    }
}

/// Issue 18, item 3, with a server: a pre-rotation copy of a staged blob is never uploaded, and
/// content downloaded from the server (sealed before the rotation, as the server keeps it) is
/// rewrapped to the current epoch as it is published, so an old copy put back is refused too.
final class PreRotationBlobSyncTests: XCTestCase {
    var h: CLIHarness!
    var server: ServerHarness!
    let content = Data("content that was synced before the rotation\n".utf8)

    override func setUpWithError() throws {
        (h, server) = try CLIHarness.loggedIn()
    }

    override func tearDown() {
        server = nil
        h = nil
    }

    /// The only blob file of the vault (staged or cached), with its bytes.
    func onlyBlob() throws -> (url: URL, bytes: Data) {
        let files = try h.blobFiles("staging") + h.blobFiles("cache")
        XCTAssertEqual(files.count, 1, "\(files)")
        let url = try XCTUnwrap(files.first)
        return (url, try Data(contentsOf: url))
    }

    /// The key epoch a sealed blob's header names (bytes 48..<52, big-endian).
    func headerEpoch(_ bytes: Data) -> UInt32 { bytes[48..<52].reduce(0) { $0 << 8 | UInt32($1) } }

    func testSyncNeverUploadsAPreRotationCopyOfAStagedBlob() throws {
        try h.ok(["put", try h.localFile("f.txt", content), "/f.txt"] + h.pw)
        let old = try onlyBlob()
        try h.ok(["key", "rotate"] + h.pw)
        try old.bytes.write(to: old.url)
        // The upload entry fails with the reason (as for any staged blob that does not open);
        // nothing is sent.
        let r = try h.run(["sync"] + h.pw)
        XCTAssertTrue((r.out + r.stderr).contains("key epoch 1"), r.out + r.stderr)
        XCTAssertTrue((r.out + r.stderr).contains("1 failed"), r.out + r.stderr)
        XCTAssertNil(try server.children()["f.txt"], "nothing published on the server")
        XCTAssertEqual((try server.curl("GET", "/v1/files?parentId=root").json["files"] as? [[String: Any]])?.count, 0)
    }

    func testADownloadIsRewrappedToTheCurrentEpochAndAnOldCopyIsRefused() throws {
        try h.ok(["put", try h.localFile("f.txt", content), "/f.txt"] + h.pw)
        try h.ok(["sync"] + h.pw)
        let old = try onlyBlob()
        XCTAssertEqual(headerEpoch(old.bytes), 1)
        try h.ok(["key", "rotate"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.ok(["evict", "/f.txt"] + h.pw)
        // The server's copy, sealed under epoch 1, downloaded by `get` (as by a pin or a sync).
        let target = h.root.appendingPathComponent("out.txt")
        try h.ok(["get", "/f.txt", target.path] + h.pw)
        XCTAssertEqual(try Data(contentsOf: target), content)
        let downloaded = try onlyBlob()
        XCTAssertEqual(headerEpoch(downloaded.bytes), 2, "published under the current epoch")
        XCTAssertEqual(try h.ok(["cat", "/f.txt"] + h.pw).stdout, content)
        try old.bytes.write(to: downloaded.url)
        let r = try h.run(["cat", "/f.txt"] + h.pw)
        XCTAssertEqual(r.status, 6, "a pre-rotation copy was read: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("key epoch 1"), r.stderr)
        XCTAssertNil(r.stdout.range(of: content), "no plaintext")
    }
}
