import Foundation
import XCTest
@testable import VaultCore
import VaultCrypto
import VaultDigest
import VaultPrimitives

/// `importFolder`: files sealed on other threads while one transaction records them in the
/// tree's order; what changed since the scan is skipped; a failure leaves no node and no blob.
final class ImportBatchTests: VaultTestCase {
    /// A tree of `folders` × `perFolder` files under `src`, each holding its own path.
    func makeTree(_ src: URL, folders: Int, perFolder: Int) throws {
        for d in 0..<folders {
            let folder = src.appendingPathComponent("d\(d)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for f in 0..<perFolder {
                try Data("d\(d)/f\(f) ".utf8 + Array(repeating: UInt8(f % 251), count: f * 37)).write(to: folder.appendingPathComponent("f\(f)"))
            }
        }
    }

    func names(_ dir: String) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] }

    func testEveryFileIsRecordedInTheTreesOrderAndWhatChangedSinceTheScanIsSkipped() throws {
        let src = dir.appendingPathComponent("src")
        try makeTree(src, folders: 3, perFolder: 120)
        let tree = try LocalTree.scan(src.path)
        // After the scan: one file gone, one now a FIFO (it must not block), one now a symbolic link.
        try FileManager.default.removeItem(at: src.appendingPathComponent("d0/f5"))
        try FileManager.default.removeItem(at: src.appendingPathComponent("d1/f6"))
        XCTAssertEqual(mkfifo(src.appendingPathComponent("d1/f6").path, 0o600), 0)
        try FileManager.default.removeItem(at: src.appendingPathComponent("d2/f7"))
        try FileManager.default.createSymbolicLink(atPath: src.appendingPathComponent("d2/f7").path, withDestinationPath: "/etc/passwd")

        var progress: [Int] = []
        let r = try vault.importFolder(tree, to: "/in") { progress.append($0) }
        XCTAssertEqual(r.files, 357)
        XCTAssertEqual(progress, Array(1...360), "progress counts every file in order, skipped ones too")
        XCTAssertEqual(r.skipped.compactMap(\.failure).sorted(), ["notFound", "usage", "usage"], "\(r.skipped)")
        XCTAssertEqual(r.skipped.count, 3)

        var fileIds: [String] = [], blobIds: [String] = []
        for d in 0..<3 {
            let folder = try vault.resolve("/in/d\(d)")
            let kids = try vault.children(of: folder.id)
            XCTAssertEqual(kids.count, 119)
            for f in 0..<120 {
                guard let n = kids.first(where: { $0.name == "f\(f)" }) else { continue }
                var content: [UInt8] = []
                _ = try vault.readContent(n) { content += $0 }
                XCTAssertEqual(content, Array("d\(d)/f\(f) ".utf8) + Array(repeating: UInt8(f % 251), count: f * 37))
            }
            // The tree's order is the order of the scan; ids rise along it.
            for f in tree.files where f.relativePath.hasPrefix("d\(d)/") {
                guard let n = kids.first(where: { "d\(d)/" + $0.name == f.relativePath }) else { continue }
                fileIds.append(n.id); blobIds.append(try XCTUnwrap(n.localPath))
            }
        }
        XCTAssertEqual(fileIds.count, 357)
        XCTAssertEqual(Set(fileIds).count, 357)
        XCTAssertEqual(Set(blobIds).count, 357)
        let scanOrder = tree.files.map(\.relativePath)
        XCTAssertEqual(scanOrder.filter { $0.hasPrefix("d0/") }.count, 120)
        XCTAssertEqual(names(layout.tempDirectory), [], "nothing is left in tmp/")
        XCTAssertEqual(names(layout.stagingDirectory).count, 357, "one staged blob per file imported")
        XCTAssertEqual(try vault.outbox().filter { $0.op == .upload }.count, 357)
    }

    /// A small blob (sealed size up to `BlobRecord.sealedDigestFloor`) keeps no sealed SHA-256,
    /// and an upload computes it from the file each time; a larger one keeps the one computed as
    /// it was written. Either way the upload's digest is the SHA-256 of the bytes on disk.
    func testOnlyABlobAboveTheFloorKeepsItsSealedSHA256() throws {
        let src = dir.appendingPathComponent("sizes")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 100).write(to: src.appendingPathComponent("small"))
        try Data((0..<(3 << 19)).map { UInt8($0 % 253) }).write(to: src.appendingPathComponent("large"))
        _ = try vault.importFolder(try LocalTree.scan(src.path), to: "/sizes") { _ in }
        for (name, keeps) in [("small", false), ("large", true)] {
            let n = try vault.resolve("/sizes/\(name)")
            let id = try XCTUnwrap(n.localPath)
            let record = try XCTUnwrap(try vault.blobRecord(id))
            XCTAssertEqual(record.sealedSHA256 != nil, keeps, name)
            XCTAssertEqual(BlobRecord.keepsSealedDigest(sealedSize: record.sealedSize), keeps, name)
            let file = try vault.openSealedBytes(id)
            var bytes = [UInt8](repeating: 0, count: Int(file.size))
            XCTAssertEqual(try bytes.withUnsafeMutableBytes { try file.read(offset: 0, into: $0) }, bytes.count)
            var hasher = SHA256Hasher(); hasher.update(bytes)
            let onDisk = Hex.encode(hasher.finalize())
            XCTAssertEqual(try vault.uploadSHA256(ofBlob: id, length: file.size), onDisk, name)
            if keeps { XCTAssertEqual(record.sealedSHA256, onDisk, name) }
            XCTAssertEqual(try vault.blobRecord(id)?.sealedSHA256 != nil, keeps, "\(name): an upload's digest is recorded only above the floor")
        }
    }

    func testIdsRiseInTheOrderOfTheFiles() throws {
        let src = dir.appendingPathComponent("src")
        try makeTree(src, folders: 2, perFolder: 50)
        let tree = try LocalTree.scan(src.path)
        try vault.importFolder(tree, to: "/in")
        let uploads = try vault.outbox().filter { $0.op == .upload }
        XCTAssertEqual(uploads.count, 100)
        let nodeIds = uploads.map(\.nodeId)
        XCTAssertEqual(nodeIds, nodeIds.sorted(), "node ids ascend in the order the files were recorded")
        let blobIds = try uploads.map { try XCTUnwrap(try vault.node(id: $0.nodeId)?.localPath) }
        XCTAssertEqual(blobIds, blobIds.sorted(), "blob ids likewise")
        XCTAssertEqual(BlobStore.ascendingIds(0), [])
        let ids = BlobStore.ascendingIds(1000)
        XCTAssertEqual(ids.map(\.count), Array(repeating: 16, count: 1000))
        XCTAssertEqual(Set(ids).count, 1000)
    }

    /// A name already taken, met after hundreds of files were sealed: the transaction rolls back
    /// and every blob of the batch, recorded or still being sealed, is removed.
    func testAFailureInTheTransactionLeavesNoNodeAndNoBlob() throws {
        let src = dir.appendingPathComponent("src")
        try makeTree(src, folders: 3, perFolder: 150)
        let existing = try file("taken", size: 10)
        try vault.mkdir("/in/d1", parents: true)
        _ = try vault.put(localFile: existing, to: "/in/d1/f149")
        let before = try vault.outbox().count
        let stagedBefore = names(layout.stagingDirectory).sorted()
        XCTAssertThrowsError(try vault.importFolder(src.path, to: "/in")) { e in
            XCTAssertEqual((e as? VaultError)?.kind, .alreadyExists, "\(e)")
        }
        XCTAssertEqual(try vault.outbox().count, before)
        XCTAssertThrowsError(try vault.resolve("/in/d0"), "no folder of the import was kept")
        XCTAssertEqual(try vault.children(of: try vault.resolve("/in/d1").id).map(\.name), ["f149"], "nor any file")
        XCTAssertEqual(names(layout.stagingDirectory).sorted(), stagedBefore, "no blob of the import is left")
        XCTAssertEqual(names(layout.tempDirectory), [])
    }

    /// The vault's own folder failing (staging is not a folder any more): the first blob that
    /// cannot be published stops the batch; nothing is recorded and no blob is left.
    func testAFailureOfTheVaultStopsTheBatchAndLeavesNothing() throws {
        let src = dir.appendingPathComponent("src")
        try makeTree(src, folders: 2, perFolder: 100)
        let staging = layout.stagingDirectory
        try FileManager.default.removeItem(atPath: staging)
        XCTAssertTrue(FileManager.default.createFile(atPath: staging, contents: Data()))
        XCTAssertThrowsError(try vault.importFolder(src.path, to: "/in")) { e in
            XCTAssertEqual((e as? VaultError)?.kind, .io, "\(e)")
        }
        try FileManager.default.removeItem(atPath: staging)
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        XCTAssertEqual(try vault.outbox().count, 0)
        XCTAssertThrowsError(try vault.resolve("/in"))
        XCTAssertEqual(names(layout.tempDirectory), [], "no partial is left")
    }
}
