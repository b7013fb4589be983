import Foundation
import XCTest
import VaultPrimitives

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

/// Deterministic pseudo-random bytes for test data (splitmix64), so failures reproduce.
struct TestRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }

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
