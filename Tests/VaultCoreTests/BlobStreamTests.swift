import Foundation
import XCTest
@testable import VaultCore
import VaultCrypto

/// A content blob sealed a piece at a time across calls (`Vault.beginContent`, what the mount
/// streams a sequential write into): published as a file's new version with the same record as
/// one sealed at once, read back whole at any point, and leaving nothing when dropped.
final class BlobStreamTests: VaultTestCase {
    func bytes(_ n: Int, seed: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ seed) } }

    func tmpNames() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: layout.tempDirectory)) ?? [] }

    func testAStreamedVersionIsTheSameAsOneSealedAtOnce() throws {
        let root = try vault.resolve("/")
        let file = try vault.createFile(in: root.id, named: "f.bin", size: 0) { _ in }
        let content = bytes(3 * 65_536 + 1_000, seed: 3)
        let stream = try vault.beginContent()
        XCTAssertEqual(tmpNames(), [], "a stream has no name in tmp/")
        try content.withUnsafeBytes { all in
            var at = 0
            for size in [1, 65_535, 70_000, 100_000, all.count] where at < all.count {   // pieces across segment boundaries
                let n = min(size, all.count - at)
                try stream.append(UnsafeRawBufferPointer(rebasing: all[at..<at + n]))
                at += n
            }
        }
        XCTAssertEqual(stream.size, UInt64(content.count))
        let n = try vault.replaceContent(of: file.id, streamed: stream, keepPrevious: false)
        XCTAssertEqual(n.size, UInt64(content.count))
        var read: [UInt8] = []
        XCTAssertEqual(try vault.readContent(n) { read += $0 }, UInt64(content.count))
        XCTAssertEqual(read, content, "read back through the checked whole read (size and SHA-256 of the node)")
        XCTAssertEqual(tmpNames(), [])
        XCTAssertThrowsError(try content.withUnsafeBytes { try stream.append($0) }, "a published stream takes no more")
    }

    func testReopenGivesWhatWasAppendedAndAnAbandonedStreamLeavesNothing() throws {
        let stream = try vault.beginContent()
        let content = bytes(200_000, seed: 9)
        try content.withUnsafeBytes { try stream.append($0) }
        let handle = try vault.reopen(stream)
        XCTAssertEqual(handle.plaintextSize, UInt64(content.count))
        var back: [UInt8] = []
        try handle.stream { back += $0 }
        XCTAssertEqual(back, content)
        XCTAssertThrowsError(try content.withUnsafeBytes { try stream.append($0) }, "finished for reading: no more appends")
        stream.abandon()
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: layout.stagingDirectory)) ?? []
        XCTAssertEqual(staged, [], "nothing was published")
        XCTAssertEqual(tmpNames(), [])
    }

    /// A stream begun before a key rotation is not published under the old epoch: it is read
    /// back (segments of the old epoch, through the key history) and stored sealed anew.
    func testAStreamBegunBeforeARotationIsReadBackAndSealedAgain() throws {
        let root = try vault.resolve("/")
        let file = try vault.createFile(in: root.id, named: "r.bin", size: 0) { _ in }
        let content = bytes(150_000, seed: 5)
        let stream = try vault.beginContent()
        try content.withUnsafeBytes { try stream.append($0) }
        _ = try vault.rotate(password: password)
        XCTAssertFalse(vault.isCurrent(stream))
        XCTAssertThrowsError(try vault.replaceContent(of: file.id, streamed: stream)) {
            XCTAssertEqual(($0 as? VaultError)?.kind, .conflict)
        }
        let back = try vault.reopen(stream)
        let n = try vault.replaceContent(of: file.id, size: back.plaintextSize, keepPrevious: false) { emit in try back.stream(emit) }
        stream.abandon()
        var read: [UInt8] = []
        _ = try vault.readContent(n) { read += $0 }
        XCTAssertEqual(read, content)
    }

    /// The named form (what `vault put` seals through) removes its partial when dropped.
    func testANamedStreamDroppedUnpublishedRemovesItsPartial() throws {
        var stream: BlobStream? = try vault.blobs.beginStream()
        try bytes(1_000, seed: 1).withUnsafeBytes { try stream!.append($0) }
        XCTAssertEqual(tmpNames().filter { $0.hasSuffix(".partial") }.count, 1)
        stream = nil
        XCTAssertEqual(tmpNames(), [])
    }
}
