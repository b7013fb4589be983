import Foundation
import XCTest
@testable import VaultCore
@testable import VaultKeys
import VaultSyncPlan

/// The records' fast decoding path (RecordJSON) takes the canonical encodings and otherwise
/// always agrees with JSONDecoder: every input decodes (or is refused) exactly as JSONDecoder does.
final class RecordJSONTests: XCTestCase {
    private let encoder: JSONEncoder = {
        let e = JSONEncoder(); e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]; return e
    }()

    /// What the codec decodes: the fast path, else JSONDecoder.
    private func decoded<T: FastRecordDecodable & Equatable>(_ text: String, as: T.Type) -> T? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { T.fastDecode($0) ?? (try? JSONDecoder().decode(T.self, from: Data($0))) }
    }

    private func assertAgrees<T: FastRecordDecodable & Equatable>(_ text: String, as t: T.Type, file: StaticString = #filePath, line: UInt = #line) {
        let reference = try? JSONDecoder().decode(T.self, from: Data(text.utf8))
        XCTAssertEqual(decoded(text, as: t), reference, "input: \(text)", file: file, line: line)
    }

    func testCanonicalRecordsTakeTheFastPathAndRoundTrip() throws {
        var seed: UInt64 = 0x7ec0
        func next() -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return seed >> 11 }
        let pieces = ["a", "é", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "\u{7F}", "日本", "🙂", " ", "x.y", "\u{301}"]
        func text() -> String { (0..<Int(next() % 12)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined() }
        func int() -> Int64 { switch next() % 4 { case 0: 0; case 1: Int64.max; case 2: Int64.min; default: Int64(bitPattern: next()) } }
        for i in 0..<2000 {
            let n = NodeRecord(device: text(), deviceName: next() % 2 == 0 ? nil : text(), mtime: int(), name: text(), parent: text(), seq: int(), isFolder: next() % 2 == 0)
            let c = ContentRecord(blob: text(), device: text(), deviceName: next() % 2 == 0 ? nil : text(), mime: text(), mtime: int(),
                                  sealedSize: int(), seq: int(), sha256: text(), size: int())
            for (value, kind) in [(try encoder.encode(n), "node"), (try encoder.encode(c), "content")] {
                let s = String(decoding: value, as: UTF8.self)
                assertAgrees(s, as: NodeRecord.self)
                assertAgrees(s, as: ContentRecord.self)
                if !s.contains("\\u") {
                    let fast = value.withUnsafeBytes { kind == "node" ? NodeRecord.fastDecode($0) as Any? : ContentRecord.fastDecode($0) }
                    XCTAssertNotNil(fast, "seed iteration \(i): the canonical \(kind) record \(s) missed the fast path")
                }
            }
        }
    }

    func testOddInputsDecodeAsJSONDecoderDecidesThem() {
        let base = #""device":"d","mtime":5,"name":"n","parent":"p","seq":2,"type":"file","v":1"#
        let cases = [
            "{\(base)}", " {\(base)} ", "{\(base)}\n", "{ \(base) }", "{\(base),\"extra\":7}", "{\"extra\":true,\(base)}",
            "{\(base),\"extra\":null}", "{\(base),\"extra\":[1]}", "{\(base),\"extra\":{\"a\":1}}", "{\(base),\"extra\":1.5}",
            "{\(base),\"v\":2}", "{\(base),\"name\":\"m\"}", #"{"device":"d","mtime":5,"name":"n","parent":"p","seq":2,"type":"file"}"#,
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":5.0"))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":5e0"))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":-0"))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":05"))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":\"5\""))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":null"))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":9223372036854775808"))}",
            "{\(base.replacingOccurrences(of: "\"mtime\":5", with: "\"mtime\":-9223372036854775808"))}",
            "{\(base.replacingOccurrences(of: "\"name\":\"n\"", with: "\"name\":\"\\u00e9\\n\""))}",
            "{\(base.replacingOccurrences(of: "\"name\":\"n\"", with: "\"name\":\"\\x\""))}",
            "{\(base.replacingOccurrences(of: "\"name\":\"n\"", with: "\"name\":\"a\tb\""))}",
            "{\(base.replacingOccurrences(of: "\"name\":\"n\"", with: "\"name\":7"))}",
            "{\(base.replacingOccurrences(of: "\"name\"", with: "\"n\\u0061me\""))}",
            "{\(base),\"deviceName\":\"laptop\"}", "{\(base),\"deviceName\":null}", "{\(base),\"deviceName\":7}",
            "{\(base),\"deviceName\":\"a\",\"deviceName\":\"b\"}",
            "{\(base)", "{\(base)}}", "{\(base),}", "[{\(base)}]", "", "{}", "null", "{\(base)} x",
        ]
        for c in cases { assertAgrees(c, as: NodeRecord.self) }
        // Bytes that are not UTF-8 inside a string.
        var bad = Array("{\(base)}".utf8)
        bad[bad.firstIndex(of: UInt8(ascii: "n"))!] = 0xFF
        let reference = try? JSONDecoder().decode(NodeRecord.self, from: Data(bad))
        XCTAssertEqual(bad.withUnsafeBytes { NodeRecord.fastDecode($0) ?? (try? JSONDecoder().decode(NodeRecord.self, from: Data($0))) }, reference)
    }
}

/// A base's content record is stored as the same bytes as before (JSONEncoder, sorted keys).
final class StoredContentJSONTests: XCTestCase {
    func testStoredJSONIsWhatTheEncoderWrote() throws {
        let encoder = JSONEncoder(); encoder.outputFormatting = [.sortedKeys]
        var seed: UInt64 = 0xc0de
        func next() -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return seed >> 11 }
        let pieces = ["a", "é", "\"", "\\", "/", "\n", "\u{1}", "\u{7F}", "\u{2028}", "日本", "🙂", " ", "application/octet-stream"]
        func text() -> String { (0..<Int(next() % 6)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined() }
        func int() -> Int64 { switch next() % 4 { case 0: 0; case 1: Int64.max; case 2: Int64.min; default: Int64(bitPattern: next()) } }
        var direct = 0
        for i in 0..<3000 {
            let c = ContentRecord(blob: text(), device: text(), deviceName: next() % 2 == 0 ? nil : text(), mime: text(), mtime: int(),
                                  sealedSize: int(), seq: int(), sha256: text(), size: int())
            let expected = String(decoding: try encoder.encode(c), as: UTF8.self)
            XCTAssertEqual(try SQLLocalView.contentJSON(c), expected, "iteration \(i) (seed 0xc0de)")
            if ContentRecord.storedJSON(c) != nil { direct += 1 }
            XCTAssertEqual(ContentRecord.decode(json: expected), c, "iteration \(i)")
        }
        XCTAssertGreaterThan(direct, 500)   // the rest hold a control character
    }
}
