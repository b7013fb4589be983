import Foundation
import XCTest
import VaultTestSupport
import VaultPrimitives
import VaultCrypto

/// Test vectors live in Tests/Vectors (next to this target's folder).
enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // VaultCryptoTests
        .deletingLastPathComponent()   // Tests
        .appendingPathComponent("Vectors")

    static func load<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        return try JSONDecoder().decode(T.self, from: data)
    }
}

/// Wycheproof file shape: only the fields the tests read.
struct WycheproofFile<Test: Decodable>: Decodable {
    struct Group: Decodable {
        let keySize: Int?
        let ivSize: Int?
        let tagSize: Int?
        let tests: [Test]
    }
    let algorithm: String
    let numberOfTests: Int
    let testGroups: [Group]
}

extension Array where Element == UInt8 {
    init(hex: String) {
        precondition(hex.utf8.count % 2 == 0, "odd hex length")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
        }
        self = bytes
    }

    var hex: String { Hex.encode(self) }
}

/// Deterministic pseudo-random test data (SeededGenerator, VaultTestSupport), so failures reproduce.
extension SeededGenerator {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

func XCTAssertThrowsCryptoError<T>(_ expression: @autoclosure () throws -> T, _ message: String = "",
                                   file: StaticString = #filePath, line: UInt = #line,
                                   matching: (Error) -> Bool = { _ in true }) {
    XCTAssertThrowsError(try expression(), message, file: file, line: line) { error in
        XCTAssertTrue(matching(error), "unexpected error \(error) \(message)", file: file, line: line)
    }
}

/// A sealed blob of `plaintext` in memory, written in one piece (the sealed-blob tests' fixture).
func sealedBlob(_ plaintext: [UInt8], vaultId: [UInt8], blobId: [UInt8], wrapKey: SecureBytes, segmentSize: Int,
                keyEpoch: UInt32 = 1) throws -> [UInt8] {
    var blob: [UInt8] = []
    let writer = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: keyEpoch, wrapKey: wrapKey, segmentSize: segmentSize) {
        blob.append(contentsOf: $0)
    }
    try writer.write(plaintext)
    _ = try writer.finish()
    return blob
}
