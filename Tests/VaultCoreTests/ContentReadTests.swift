import Foundation
import XCTest
import VaultTestSupport
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto

/// The read path: a whole read is checked against the node's size and SHA-256 (issue 9, item 1).
final class ContentReadTests: VaultTestCase {
    func testPipelinedHasherMatchesSHA256ForEveryPieceSizeAndBufferBoundary() {
        var random = SeededGenerator(test: self.name)
        let buffer = 4096
        for size in [0, 1, buffer - 1, buffer, buffer + 1, 2 * buffer, 5 * buffer + 17] {
            let data = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            var reference = SHA256Hasher()
            reference.update(data)
            let expected = reference.finalize()
            for piece in [1, 100, buffer - 1, buffer, 3 * buffer + 5] {
                let hasher = PipelinedHasher(bufferSize: buffer)
                data.withUnsafeBytes { all in
                    var offset = 0
                    while offset < all.count {
                        let n = min(piece, all.count - offset)
                        hasher.update(UnsafeRawBufferPointer(rebasing: all[offset..<offset + n]))
                        offset += n
                    }
                }
                XCTAssertEqual(hasher.finalize(), expected, "size \(size), pieces of \(piece)")
            }
        }
    }

    func testWholeReadChecksTheRecordedSizeAndChecksum() throws {
        let size = (5 << 20) / 2 + 3   // crosses the hasher's 1 MiB buffers
        let n = try vault.put(localFile: try file("f", size: size), to: "/f")
        var out: [UInt8] = []
        XCTAssertEqual(try vault.readContent(n) { out += $0 }, UInt64(size))
        XCTAssertEqual(out.count, size)
        XCTAssertEqual(try vault.doctor(verify: true).problems, [])

        // A recorded checksum that differs: every byte was delivered, then the read fails.
        try vault.db.run("UPDATE nodes SET sha256 = ? WHERE id = ?", [String(repeating: "0", count: 64), CompactColumns.key(n.id)])
        var delivered = 0
        XCTAssertThrowsError(try vault.readContent(try vault.node(id: n.id)!) { delivered += $0.count }) {
            XCTAssertEqual(($0 as? VaultError)?.kind, .integrity)
            XCTAssertTrue(($0 as? VaultError)?.message.contains("SHA-256") == true, "\($0)")
        }
        XCTAssertEqual(delivered, size)
        XCTAssertEqual(try vault.doctor(verify: true).problems.count, 1, "doctor --verify checks it too")

        // A recorded size that differs: refused before any byte.
        try vault.db.run("UPDATE nodes SET sha256 = ?, size = size + 1 WHERE id = ?", [n.sha256, CompactColumns.key(n.id)])
        delivered = 0
        XCTAssertThrowsError(try vault.readContent(try vault.node(id: n.id)!) { delivered += $0.count }) {
            XCTAssertEqual(($0 as? VaultError)?.kind, .integrity)
        }
        XCTAssertEqual(delivered, 0)
    }
}
