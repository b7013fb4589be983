import XCTest
import VaultTestSupport
@testable import VaultSyncPlan

/// The listing's id set: exact membership for ids in order (the server's), out of order, repeated,
/// and not in the packed form, across many blocks.
final class ListedIdsTests: XCTestCase {

    private func hexId(_ r: inout SeededGenerator) -> String {
        let a = r.next(), b = r.next()
        let h = String(a, radix: 16), l = String(b, radix: 16)
        return String(repeating: "0", count: 16 - h.count) + h + String(repeating: "0", count: 16 - l.count) + l
    }

    func testMembershipIsExactInAndOutOfOrder() {
        let seed: UInt64 = 20261130
        var r = SeededGenerator(seed: seed)
        let sorted = (0..<20_000).map { _ in hexId(&r) }.sorted()
        let late = (0..<500).map { _ in hexId(&r) }          // arrive after, out of order
        let absent = (0..<2_000).map { _ in hexId(&r) }
        let odd = ["root", "ABCDEF0123456789ABCDEF0123456789", String(sorted[0].dropLast()), sorted[1] + "0", "zz" + sorted[2].dropFirst(2)]
        var ids = ListedIds()
        for id in sorted { ids.insert(id) }
        for id in late { ids.insert(id) }
        for id in sorted.prefix(100) { ids.insert(id) }          // repeated
        for id in odd { ids.insert(id) }
        for id in sorted + late + odd { XCTAssertTrue(ids.contains(id), "seed \(seed): \(id) listed") }
        for id in absent where !sorted.contains(id) && !late.contains(id) {
            XCTAssertFalse(ids.contains(id), "seed \(seed): \(id) never listed")
        }
        XCTAssertFalse(ids.contains(sorted[0].uppercased()), "a different spelling is a different id")
        XCTAssertFalse(ids.contains(String(sorted[3].dropLast())))
        XCTAssertFalse(ids.contains(""))
    }

    func testEmptyAndSingle() {
        var ids = ListedIds()
        XCTAssertFalse(ids.contains("0123456789abcdef0123456789abcdef"))
        ids.insert("0123456789abcdef0123456789abcdef")
        XCTAssertTrue(ids.contains("0123456789abcdef0123456789abcdef"))
        XCTAssertFalse(ids.contains("0123456789abcdef0123456789abcdee"))
        XCTAssertFalse(ids.contains("0123456789abcdef0123456789abcdf0"))
    }
}
