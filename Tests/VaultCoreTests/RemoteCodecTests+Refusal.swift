import Foundation
import XCTest
import VaultCore

/// What `openOrRefuse` refuses (a node whose own record is missing or does not authenticate:
/// no device of the vault wrote it) and what it still throws (a lie about an authentic node).
extension RemoteCodecTests {
    func testANodeWithoutAnAuthenticRecordIsRefusedAndALieAboutAnAuthenticOneThrows() throws {
        let a = RemoteCodec.newId(), b = RemoteCodec.newId()
        let ea = try entry(id: a, parent: "root", name: "a.txt", content: content())
        let eb = try entry(id: b, parent: "root", name: "b.txt", content: content(size: 9))
        func refused(_ e: SealedRemoteEntry) throws -> RefusedNode? {
            if case .refused(let r) = try codec.openOrRefuse(e) { return r }
            return nil
        }
        XCTAssertNil(try refused(ea), "an authentic node opens")
        var x = ea; x.meta = nil
        XCTAssertEqual(try refused(x)?.reason, "node \(a) on the server is not end-to-end encrypted")
        x = ea; x.meta = eb.meta
        XCTAssertTrue(try refused(x)?.reason.contains("does not authenticate") == true, "another node's record")
        x = ea; x.meta = "1.AAAA"
        XCTAssertNotNil(try refused(x), "a forged record")
        for lie in [{ (e: inout SealedRemoteEntry) in e.name = eb.name }, { $0.parentId = b }, { $0.isFolder = true },
                    { $0.contentMeta = eb.contentMeta }, { $0.id = "not-an-id" }] {
            x = ea; lie(&x)
            XCTAssertThrowsError(try codec.openOrRefuse(x)) { XCTAssertEqual(($0 as? VaultError)?.kind, .integrity) }
        }
    }
}
