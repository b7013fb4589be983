import Foundation
import VaultAPI
import XCTest

/// A listing page written directly (APIJSON.encode) is byte for byte what the API's JSONEncoder
/// writes, for seeded random resources with every kind of string and absent optional.
final class FileListJSONTests: XCTestCase {
    func testListingPagesMatchTheEncoderByteForByte() throws {
        var seed: UInt64 = 0x11575
        func next() -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return seed >> 11 }
        let pieces = ["a", "é", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{C}", "\u{1}", "\u{1F}", "\u{7F}", "日本", "🙂", " ", "<&>"]
        func text() -> String { (0..<Int(next() % 10)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined() }
        func maybe() -> String? { next() % 3 == 0 ? nil : text() }
        func int() -> Int64 { switch next() % 4 { case 0: 0; case 1: Int64.max; case 2: Int64.min; default: Int64(bitPattern: next()) } }
        func date() -> Date { Date(timeIntervalSince1970: Double(Int64(next() % 8_000_000_000_000) - 2_000_000_000_000) / 1000) }
        for i in 0..<300 {
            let files = (0..<Int(next() % 8)).map { _ in
                FileResource(id: text(), name: text(), parentId: maybe(), type: next() % 2 == 0 ? .file : .folder, mimeType: text(),
                             size: int(), version: int(), sha256: maybe(), createdAt: date(), modifiedAt: date(),
                             trashed: next() % 2 == 0, headRevisionId: maybe(), meta: maybe(), contentMeta: maybe())
            }
            let list = FileList(files: files, nextPageToken: maybe())
            let expected = [UInt8](try APIJSON.encoder().encode(list))
            XCTAssertEqual(String(decoding: APIJSON.encode(list), as: UTF8.self), String(decoding: expected, as: UTF8.self), "iteration \(i) (seed 0x11575)")
            for f in files { XCTAssertEqual(APIJSON.encode(f), [UInt8](try APIJSON.encoder().encode(f)), "iteration \(i)") }
        }
    }
}
