import Foundation
import VaultCore
@testable import VaultMount
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The mount's pieces without a mount: staged content, the inode and handle tables, and the
/// errno each vault error becomes.
final class MountTablesTests: XCTestCase {
    func testStagedContentWritesTruncatesAndGrowsWithZeros() throws {
        let s = StagedContent(modified: 0)
        XCTAssertFalse(s.dirty)
        try Array("hello".utf8).withUnsafeBytes { try s.write($0, at: 0) }
        try Array("XY".utf8).withUnsafeBytes { try s.write($0, at: 8) }   // a gap reads as zeros
        XCTAssertEqual(Array(s.bytes), Array("hello".utf8) + [0, 0, 0] + Array("XY".utf8))
        XCTAssertTrue(s.dirty)
        try s.truncate(2)
        XCTAssertEqual(Array(s.bytes), Array("he".utf8))
        try s.truncate(4)
        XCTAssertEqual(Array(s.bytes), Array("he".utf8) + [0, 0])   // what was cut does not come back
        let big = [UInt8](repeating: 7, count: 300_000)
        try big.withUnsafeBytes { try s.write($0, at: 4) }
        XCTAssertEqual(s.count, 300_004)
        XCTAssertEqual(Array(s.bytes.suffix(3)), [7, 7, 7])
        s.release()
        XCTAssertEqual(s.count, 0)
    }

    func testStagedContentRefusesPastItsLimit() {
        let s = StagedContent(modified: 0)
        XCTAssertThrowsError(try s.truncate(StagedContent.limit + 1)) { e in
            XCTAssertEqual((e as? FuseErrno)?.code, EFBIG)
        }
        XCTAssertEqual(s.count, 0)
    }

    func testInodeNumbersAreStableAndNeverReused() throws {
        let t = InodeTable()
        XCTAssertEqual(try t.inode(InodeTable.rootIno).nodeId, Vault.rootId)
        let a = t.inode(forNode: "a"), b = t.inode(forNode: "b")
        XCTAssertNotEqual(a.ino, b.ino)
        XCTAssertTrue(t.inode(forNode: "a") === a)
        XCTAssertEqual(try t.inode(a.ino).nodeId, "a")
        XCTAssertThrowsError(try t.inode(9999)) { XCTAssertEqual(($0 as? FuseErrno)?.code, ESTALE) }
        XCTAssertEqual(Set(t.all), [1, a.ino, b.ino])
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
