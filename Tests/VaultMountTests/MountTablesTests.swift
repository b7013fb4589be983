import Foundation
@testable import VaultCore
import VaultCrypto
import VaultPrimitives
@testable import VaultMount
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The mount's pieces without a mount: staged content, the inode and handle tables, and the
/// errno each vault error becomes.
final class MountTablesTests: XCTestCase {
    /// A folder of its own for the staging files (`O_TMPFILE`: none is ever listed).
    func stagingFolder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("staged-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.path
    }

    func all(_ s: StagedContent) throws -> [UInt8] {
        var out: [UInt8] = []
        try s.forEachSegment { out += $0 }
        var viaRead: [UInt8] = []
        try s.read(at: 0, size: s.count) { viaRead = Array($0) }
        XCTAssertEqual(out, viaRead)
        return out
    }

    func testStagedContentWritesTruncatesAndGrowsWithZeros() throws {
        let s = try StagedContent(folder: try stagingFolder(), modified: 0)
        XCTAssertFalse(s.dirty)
        try Array("hello".utf8).withUnsafeBytes { try s.write($0, at: 0) }
        try Array("XY".utf8).withUnsafeBytes { try s.write($0, at: 8) }   // a gap reads as zeros
        XCTAssertEqual(try all(s), Array("hello".utf8) + [0, 0, 0] + Array("XY".utf8))
        XCTAssertTrue(s.dirty)
        try s.truncate(2)
        XCTAssertEqual(try all(s), Array("he".utf8))
        try s.truncate(4)
        XCTAssertEqual(try all(s), Array("he".utf8) + [0, 0])   // what was cut does not come back
        let big = [UInt8](repeating: 7, count: 300_000)
        try big.withUnsafeBytes { try s.write($0, at: 4) }
        XCTAssertEqual(s.count, 300_004)
        XCTAssertEqual(Array(try all(s).suffix(3)), [7, 7, 7])
        s.release()
        XCTAssertEqual(s.count, 0)
    }

    /// The mount replies to an append before sealing it (`acceptAppend`, then `sealAccepted`):
    /// a sealing that fails then (here a full device under the stream) is kept and reported by
    /// every later operation on the content, as a failed write-back is at the next write, fsync
    /// or close, and nothing more is taken.
    func testASealingThatFailsAfterTheReplyIsReportedByEveryLaterOperation() throws {
        let root = try stagingFolder()
        let v = try Vault.create(layout: VaultLayout(root: root + "/v"), password: SecureBytes(copying: Array("pw".utf8)),
                                 kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
        let s = try StagedContent(folder: v.layout.tempDirectory, modified: 0)
        let stream = try v.beginContent()
        s.startStream(stream)
        let full = open("/dev/full", O_WRONLY)
        XCTAssertGreaterThanOrEqual(full, 0)
        XCTAssertEqual(dup2(full, stream.fd), stream.fd)   // the stream's sealed bytes now meet a full device
        close(full)
        let piece = [UInt8](repeating: 7, count: 64 << 10)
        var accepted = 0
        while s.failure == nil && accepted < 64 {   // the stream writes 1 MiB at a time
            let taken: Bool = piece.withUnsafeBytes { p in
                do { try s.acceptAppend(p.count, at: s.count) } catch { return false }
                s.sealAccepted(p)
                return true
            }
            XCTAssertTrue(taken)
            accepted += 1
        }
        XCTAssertEqual(s.failure?.code, ENOSPC, "\(String(describing: s.failure))")
        XCTAssertNil(s.stream)
        func code(_ body: () throws -> Void) -> Int32? {
            do { try body(); return nil } catch { return (error as? FuseErrno)?.code }
        }
        XCTAssertEqual(code { try piece.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws -> Void in try s.write(p, at: s.count) } }, ENOSPC)
        XCTAssertEqual(code { try s.acceptAppend(1, at: s.count) }, ENOSPC)
        XCTAssertEqual(code { try s.truncate(0) }, ENOSPC)
        XCTAssertEqual(code { try s.read(at: 0, size: 10) { _ in } }, ENOSPC)
        XCTAssertEqual(code { try s.forEachSegment { _ in } }, ENOSPC)
        s.release()
    }

    func testStagedContentRefusesPastItsLimit() throws {
        let s = try StagedContent(folder: try stagingFolder(), modified: 0)
        XCTAssertThrowsError(try s.truncate(StagedContent.limit + 1)) { e in
            XCTAssertEqual((e as? FuseErrno)?.code, EFBIG)
        }
        XCTAssertEqual(s.count, 0)
    }

    /// Seeded random writes, truncations and reads agree with a plain array, across segment
    /// boundaries and sparse gaps.
    func testStagedContentAgreesWithAnArrayUnderRandomOperations() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["VAULT_TEST_SEED"] ?? "") ?? 20_261_202
        print("testStagedContentAgreesWithAnArrayUnderRandomOperations: seed \(seed) (VAULT_TEST_SEED replays it)")
        var g = SplitMix64(seed: seed)
        let s = try StagedContent(folder: try stagingFolder(), modified: 0)
        var model: [UInt8] = []
        let seg = StagedContent.segmentSize
        for step in 0..<400 {
            switch g.next() % 3 {
            case 0:
                let at = Int(g.next() % UInt64(4 * seg)), n = Int(g.next() % UInt64(2 * seg))
                let data = (0..<n).map { _ in UInt8(truncatingIfNeeded: g.next()) }
                try data.withUnsafeBytes { try s.write($0, at: at) }
                if model.count < at + n { model += [UInt8](repeating: 0, count: at + n - model.count) }
                model.replaceSubrange(at..<(at + n), with: data)
            case 1:
                let size = Int(g.next() % UInt64(5 * seg))
                try s.truncate(size)
                if size < model.count { model.removeSubrange(size...) } else { model += [UInt8](repeating: 0, count: size - model.count) }
            default:
                let at = Int(g.next() % UInt64(5 * seg)), n = Int(g.next() % UInt64(seg + 7))
                var got: [UInt8] = []
                try s.read(at: at, size: n) { got = Array($0) }
                let lo = min(at, model.count), hi = min(model.count, lo + n)
                XCTAssertEqual(got, Array(model[lo..<hi]), "seed \(seed), step \(step)")
            }
            XCTAssertEqual(s.count, model.count, "seed \(seed), step \(step)")
        }
        XCTAssertEqual(try all(s), model, "seed \(seed)")
    }

    /// On disk: no plaintext, no name in the folder, and a segment altered on disk is EIO.
    func testStagedContentIsSealedOnDiskUnnamedAndAlteredSegmentsAreRefused() throws {
        let folder = try stagingFolder()
        let s = try StagedContent(folder: folder, modified: 0)
        let marker = Array("plaintext that must never reach the disk. ".utf8)
        let data = Array((0..<4000).map { _ in marker }.joined())   // about 170 KiB: three segments
        try data.withUnsafeBytes { try s.write($0, at: 0) }
        try s.read(at: 0, size: 1) { _ in }   // the last segment is sealed out of the window
        try s.read(at: 2 * StagedContent.segmentSize, size: 1) { _ in }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], "the staging file has no name")
        var raw = [UInt8](repeating: 0, count: Int(s.file.size))
        _ = try raw.withUnsafeMutableBytes { try s.file.read(into: $0, at: 0) }
        XCTAssertGreaterThan(raw.count, data.count)
        XCTAssertNil(raw.firstRange(of: marker[0..<16]), "no plaintext on disk")
        // One byte of the second segment flipped on disk: reading it is EIO, never bytes.
        let byte: [UInt8] = [raw[StagedContent.segmentSize + 100] ^ 1]
        try byte.withUnsafeBytes { try s.file.write($0, at: Int64(StagedContent.segmentSize + 100)) }
        XCTAssertThrowsError(try s.read(at: StagedContent.segmentSize + 5, size: 10) { _ in XCTFail("bytes of an altered segment") }) { e in
            XCTAssertEqual((e as? FuseErrno)?.code, EIO)
        }
    }

    func testInodeNumbersAreStableAndNeverReused() throws {
        let t = InodeTable()
        XCTAssertEqual(try t.inode(InodeTable.rootIno).nodeId, Vault.rootId)
        let a = t.inode(forNode: "a"), b = t.inode(forNode: "b")
        XCTAssertNotEqual(a.ino, b.ino)
        XCTAssertEqual(t.inode(forNode: "a").ino, a.ino)
        XCTAssertEqual(try t.inode(a.ino).nodeId, "a")
        XCTAssertThrowsError(try t.inode(9999)) { XCTAssertEqual(($0 as? FuseErrno)?.code, ESTALE) }
        XCTAssertEqual(Set(t.all), [1, a.ino, b.ino])
    }

    func testNodeIdsAreKeptCompactAndComeBackAsTheyWere() throws {
        let t = InodeTable()
        let hex = "0123456789abcdef00ff10aa55c3e7f9", upper = "0123456789ABCDEF00FF10AA55C3E7F9"
        for id in [hex, upper, "root", "a", String(hex.dropLast()), hex + "0", "é" + hex.dropFirst()] {
            XCTAssertEqual(InodeTable.CompactID(id).string, id)
            let i = t.inode(forNode: id)
            XCTAssertEqual(i.nodeId, id)
            XCTAssertEqual(t.existing(forNode: id)?.ino, i.ino)
        }
        if case .hex = InodeTable.CompactID(hex) {} else { XCTFail("a vault id is kept as 16 bytes") }
        if case .text = InodeTable.CompactID(upper) {} else { XCTFail("upper case is not the vault's spelling: kept as text") }
        XCTAssertNotEqual(t.inode(forNode: hex).ino, t.inode(forNode: upper).ino)
        // Side state: set through one copy, seen through another, gone once back to nothing.
        let a = t.inode(forNode: hex), b = try t.inode(a.ino)
        a.modifiedOverride = 7; a.openCount += 1; a.servedBlob = hex
        XCTAssertEqual(b.modifiedOverride, 7); XCTAssertEqual(b.openCount, 1); XCTAssertEqual(b.servedBlob, hex)
        b.openCount -= 1; b.modifiedOverride = nil
        XCTAssertEqual(a.openCount, 0); XCTAssertNil(a.modifiedOverride); XCTAssertEqual(a.servedBlob, hex)
        a.entry = (1, "name"); a.seen = InodeTable.Seen(parentIno: 1, size: 3, modified: 4, blob: nil, state: .local)
        XCTAssertEqual(b.entry?.name, "name"); XCTAssertEqual(b.seen?.size, 3)
        // Many ids (the index grows several times): each keeps its inode and its id.
        var inos: [String: UInt64] = [:]
        for _ in 0..<5000 {
            let id = (0..<16).map { _ in String(Int.random(in: 0...255) | 0x100, radix: 16).dropFirst() }.joined()
            inos[id] = t.inode(forNode: id).ino
        }
        XCTAssertEqual(Set(inos.values).count, inos.count)
        for (id, ino) in inos {
            XCTAssertEqual(t.existing(forNode: id)?.ino, ino)
            XCTAssertEqual(try t.inode(ino).nodeId, id)
        }
        XCTAssertNil(t.existing(forNode: "ffffffffffffffffffffffffffffffff"))
        XCTAssertEqual(t.existing(forNode: hex)?.ino, a.ino)
    }

    func testHandlesCountOpensPerInode() throws {
        let t = InodeTable(), h = HandleTable()
        let i = t.inode(forNode: "f")
        let one = h.add(HandleTable.OpenFile(inode: i, writable: true, append: false))
        let two = h.add(HandleTable.OpenFile(inode: i, writable: false, append: false))
        XCTAssertEqual(i.openCount, 2)
        XCTAssertNil(h.removeFile(one))            // not the last
        XCTAssertNotNil(h.removeFile(two))         // the last: its staged content may go
        XCTAssertEqual(i.openCount, 0)
        XCTAssertThrowsError(try h.file(one)) { XCTAssertEqual(($0 as? FuseErrno)?.code, EBADF) }
    }

    func testVaultErrorsBecomeTheErrnoProgramsExpect() {
        let cases: [(VaultError.Kind, Int32)] = [(.notFound, ENOENT), (.alreadyExists, EEXIST), (.invalidName, EINVAL),
                                                 (.locked, EACCES), (.integrity, EIO), (.notLocal, EIO), (.noSpace, ENOSPC),
                                                 (.busy, EBUSY), (.policy, EPERM)]
        for (kind, code) in cases {
            XCTAssertEqual(FuseErrno(VaultError(kind, "x"), doing: "test").code, code, "\(kind)")
        }
    }

    func testNamesTheVaultRefusesAreEINVALOrENAMETOOLONG() {
        func code(_ s: String) -> Int32? {
            s.withCString { p in
                do throws(FuseErrno) { _ = try MountFilesystem.name(p); return nil } catch { return error.code }
            }
        }
        XCTAssertNil(code("report.pdf"))
        XCTAssertEqual(code(String(repeating: "x", count: 256)), ENAMETOOLONG)
        XCTAssertEqual(code(".."), EINVAL)
        let notUTF8: [CChar] = [0x61, -1, 0]
        let e: Int32? = notUTF8.withUnsafeBufferPointer { p in
            do throws(FuseErrno) { _ = try MountFilesystem.name(p.baseAddress!); return nil } catch { return error.code }
        }
        XCTAssertEqual(e, EINVAL)
    }
}
