import XCTest
@testable import VaultCrypto

final class SecureBytesTests: XCTestCase {
    func testDescriptionIsRedacted() {
        let key = SecureBytes(copying: [UInt8](repeating: 0xAB, count: 32))
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
            XCTAssertFalse(text.lowercased().contains("ab"), text)
            XCTAssertTrue(text.contains("redacted"), text)
        }
    }

    func testConstantTimeEquals() {
        let a = SecureBytes(copying: [1, 2, 3, 4])
        XCTAssertTrue(a.constantTimeEquals(SecureBytes(copying: [1, 2, 3, 4])))
        XCTAssertFalse(a.constantTimeEquals(SecureBytes(copying: [1, 2, 3, 5])))
        XCTAssertFalse(a.constantTimeEquals(SecureBytes(copying: [1, 2, 3])))
        XCTAssertTrue(SecureBytes(count: 0).constantTimeEquals(SecureBytes(count: 0)))
        XCTAssertTrue(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2]))
        XCTAssertTrue(constantTimeEqual([UInt8](), [UInt8]()))
    }

    func testHexRoundTrip() throws {
        let key = SecureBytes.random(count: 32)
        let hex = key.hexForStorage
        XCTAssertEqual(hex.count, 64)
        XCTAssertEqual(hex, hex.lowercased())
        let parsed = try XCTUnwrap(SecureBytes(hex: hex))
        XCTAssertTrue(parsed.constantTimeEquals(key))
        XCTAssertEqual(SecureBytes(hex: "00FFa0")?.withUnsafeBytes { Array($0) }, [0x00, 0xFF, 0xA0])
        XCTAssertEqual(SecureBytes(hex: "")?.count, 0)
        XCTAssertNil(SecureBytes(hex: "abc"))
        XCTAssertNil(SecureBytes(hex: "zz"))
        XCTAssertNil(SecureBytes(hex: "00 11"))
    }

    func testInitializers() {
        XCTAssertEqual(SecureBytes(count: 5).withUnsafeBytes { Array($0) }, [0, 0, 0, 0, 0])
        XCTAssertEqual(SecureBytes(copying: [1, 2, 3][1...]).withUnsafeBytes { Array($0) }, [2, 3])
        XCTAssertEqual(SecureBytes(copying: Set([UInt8(9)])).withUnsafeBytes { Array($0) }, [9])
        [UInt8]([4, 5]).withUnsafeBytes { buffer in
            XCTAssertEqual(SecureBytes(copying: buffer).withUnsafeBytes { Array($0) }, [4, 5])
        }
        let a = SecureBytes.random(count: 32), b = SecureBytes.random(count: 32)
        XCTAssertFalse(a.constantTimeEquals(b))
        XCTAssertEqual(SecureRandom.bytes(24).count, 24)
        a.withUnsafeMutableBytes { $0[0] = 1 }
        XCTAssertEqual(a.withUnsafeBytes { $0[0] }, 1)
        _ = SecureBytes.memoryLockingAvailable   // must not crash; the value depends on RLIMIT_MEMLOCK
    }

    /// Keys of up to 64 bytes share slots of locked regions (`SecureSlab`): each keeps its own
    /// bytes however many are alive (more than one region's 256), and a slot given out again
    /// starts zeroed, never with the bytes of the key that held it.
    func testSmallKeysInSharedSlotsKeepTheirOwnBytesAndStartZeroed() {
        var keys: [(SecureBytes, [UInt8])] = []
        for i in 0..<700 {
            let n = 1 + i % 64
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) | 1 }
            keys.append((SecureBytes(copying: bytes), bytes))
        }
        for (key, bytes) in keys { XCTAssertEqual(key.withUnsafeBytes { Array($0) }, bytes) }
        keys.removeAll()   // every slot wiped and given back
        let fresh = (0..<700).map { _ in SecureBytes(count: 64) }
        XCTAssertTrue(fresh.allSatisfy { $0.withUnsafeBytes { $0.allSatisfy { $0 == 0 } } }, "a reused slot starts zeroed")
        let big = SecureBytes.random(count: 65)   // past a slot: its own allocation
        XCTAssertEqual(big.count, 65)
        XCTAssertFalse(big.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
    }

    func testUUIDStringsAreVersion4AndDistinct() {
        let all = (0..<1000).map { _ in SecureRandom.uuidString() }
        XCTAssertEqual(Set(all).count, all.count)
        for u in all {
            XCTAssertEqual(UUID(uuidString: u)?.uuidString.lowercased(), u, "Foundation reads it back the same")
            let c = Array(u.utf8)
            XCTAssertEqual(c.count, 36)
            XCTAssertEqual(c[14], UInt8(ascii: "4"), "version 4")
            XCTAssertTrue("89ab".utf8.contains(c[19]), "RFC 4122 variant")
        }
    }
}
