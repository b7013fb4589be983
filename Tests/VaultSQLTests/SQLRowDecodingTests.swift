import Foundation
import XCTest
@testable import VaultSQL

final class SQLRowDecodingTests: XCTestCase {
    enum Shade: String { case light, dark }

    var db: SQLDatabase!
    override func setUpWithError() throws {
        db = try SQLDatabase(path: ":memory:")
        try db.execute("CREATE TABLE t(i INTEGER, s TEXT, b BLOB, r REAL, n INTEGER)")
        try db.run("INSERT INTO t VALUES (?, ?, ?, ?, NULL)", [Int64(7), "dark", [UInt8]([1, 2]), 2.5])
    }

    func row() throws -> SQLRow { try XCTUnwrap(db.queryOne("SELECT i, s, b, r, n, i AS flag FROM t")) }

    func testDecodesEveryTypeByName() throws {
        let r = try row()
        XCTAssertEqual(try r.decode(Int64.self, "i"), 7)
        XCTAssertEqual(try r.decode(Int.self, "i"), 7)
        XCTAssertEqual(try r["s", as: String.self], "dark")
        XCTAssertEqual(try r.decode([UInt8].self, "b"), [1, 2])
        XCTAssertEqual(try r.decode(Double.self, "r"), 2.5)
        XCTAssertEqual(try r.decode(Double.self, "i"), 7)
        XCTAssertEqual(try r.decode(Bool.self, "flag"), true)
        XCTAssertEqual(try r.decode(Shade.self, "s"), .dark)
        XCTAssertEqual(try r.decode(Shade?.self, "s"), .dark)
        XCTAssertNil(try r.decode(Shade?.self, "n"))
    }

    func testOptionalDecodesNullAndValues() throws {
        let r = try row()
        XCTAssertNil(try r.decode(Int64?.self, "n"))
        XCTAssertEqual(try r.decode(String?.self, "s"), "dark")
        XCTAssertThrowsError(try r.decode(String?.self, "i")) { assertDecoding($0, mentions: "\"i\"") }
    }

    func testMissingColumnThrows() throws {
        XCTAssertThrowsError(try row().decode(Int64.self, "size")) { assertDecoding($0, mentions: "no column \"size\"") }
    }

    func testWrongTypeThrowsNamingColumnAndFound() throws {
        let r = try row()
        XCTAssertThrowsError(try r.decode(Int64.self, "s")) { assertDecoding($0, mentions: "\"s\" holds TEXT") }
        XCTAssertThrowsError(try r.decode(String.self, "b")) { assertDecoding($0, mentions: "\"b\" holds BLOB") }
        XCTAssertThrowsError(try r.decode(Int64.self, "n")) { assertDecoding($0, mentions: "\"n\" holds NULL") }
        XCTAssertThrowsError(try r.decode(Int64.self, "r")) { assertDecoding($0, mentions: "\"r\" holds REAL") }
        try db.run("UPDATE t SET s = 'grey'")
        XCTAssertThrowsError(try self.row().decode(Shade.self, "s")) { assertDecoding($0, mentions: "Shade") }
    }

    func testTypedScalar() throws {
        XCTAssertEqual(try db.scalar(Int64.self, "SELECT count(*) FROM t"), 1)
        XCTAssertNil(try db.scalar(Int64.self, "SELECT i FROM t WHERE 0"))
        XCTAssertThrowsError(try db.scalar(Int64.self, "SELECT max(i) FROM t WHERE 0")) { assertDecoding($0, mentions: "NULL") }
        XCTAssertThrowsError(try db.scalar(Int64.self, "SELECT i, s FROM t")) { assertDecoding($0, mentions: "2 columns") }
    }

    func testResultCodesMatchExtendedCodes() throws {
        try db.execute("CREATE TABLE u(k TEXT PRIMARY KEY)")
        try db.run("INSERT INTO u VALUES ('a')")
        XCTAssertThrowsError(try db.run("INSERT INTO u VALUES ('a')")) {
            let e = $0 as? SQLError
            XCTAssertEqual(e?.kind, .constraint)
            XCTAssertTrue(e.map { SQLResultCode.constraint ~= $0.resultCode } ?? false)
            XCTAssertNotEqual(e?.resultCode, .constraint, "the extended code (CONSTRAINT_PRIMARYKEY) is kept")
            XCTAssertEqual(e?.resultCode.primary, .constraint)
        }
    }
}

func assertDecoding(_ error: Error, mentions text: String, file: StaticString = #filePath, line: UInt = #line) {
    guard let e = error as? SQLError else { return XCTFail("not a SQLError: \(error)", file: file, line: line) }
    XCTAssertEqual(e.kind, .decoding, file: file, line: line)
    XCTAssertTrue(e.message.contains(text), "\(e.message) does not mention \(text)", file: file, line: line)
}
