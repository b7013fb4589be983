import Foundation
import XCTest
@testable import VaultCrypto

final class KDFTests: XCTestCase {
    // MARK: Argon2id

    struct Argon2LibsodiumFile: Decodable {
        struct Test: Decodable {
            let tcId: Int
            let password, salt: String
            let outlen: Int
            let opslimit: UInt64
            let memlimitBytes: UInt64
            let result: String
            let hash: String?
        }
        let tests: [Test]
    }

    /// libsodium's own crypto_pwhash(ARGON2ID13) table, including the must-fail outlen = 5.
    ///
    /// `argon2id_rfc9106.json` and `argon2id_phc_reference.json` are not run: crypto_pwhash uses
    /// one lane, takes no secret or associated data and needs a 16-byte salt, while those vectors
    /// use 4 lanes / secret / ad (RFC) or 8-byte salts and p = 2 (phc).
    func testArgon2idLibsodiumVectors() throws {
        let file: Argon2LibsodiumFile = try Vectors.load("argon2id_libsodium.json")
        XCTAssertEqual(file.tests.count, 8)
        var passed = 0
        for test in file.tests {
            let password = SecureBytes(copying: [UInt8](hex: test.password))
            let derive = {
                try KDF.argon2id(password: password, salt: [UInt8](hex: test.salt), opsLimit: test.opslimit,
                                 memLimitBytes: test.memlimitBytes, length: test.outlen)
            }
            if test.result == "valid" {
                XCTAssertEqual(try derive().withUnsafeBytes { Array($0) }.hex, test.hash, "tcId \(test.tcId)")
            } else {
                XCTAssertThrowsError(try derive(), "tcId \(test.tcId) must fail")
            }
            passed += 1
        }
        XCTAssertEqual(passed, 8)
    }

    func testArgon2idParameterChecks() {
        let password = SecureBytes(copying: Array("pw".utf8))
        let salt = [UInt8](repeating: 1, count: 16)
        XCTAssertThrowsError(try KDF.argon2id(password: password, salt: [1, 2, 3], opsLimit: 1, memLimitBytes: 1 << 20, length: 32))
        XCTAssertThrowsError(try KDF.argon2id(password: password, salt: salt, opsLimit: 0, memLimitBytes: 1 << 20, length: 32))
        XCTAssertThrowsError(try KDF.argon2id(password: password, salt: salt, opsLimit: 1, memLimitBytes: 100, length: 32))
        XCTAssertThrowsError(try KDF.derive(password: password, parameters: .argon2id(opsLimit: 1, memLimitBytes: 1 << 20, salt: [1])))
    }

    // MARK: PBKDF2

    struct PBKDF2Test: Decodable {
        let tcId: Int
        let password, salt: String
        let iterationCount: UInt32
        let dkLen: Int
        let dk: String
        let result: String
    }

    /// All Wycheproof PBKDF2 tests (the largest iteration count is 80 000; the whole set runs in a
    /// few seconds, so nothing is skipped).
    func testPBKDF2Wycheproof() throws {
        for (name, hash, expected) in [("wycheproof_pbkdf2_hmacsha256_test.json", KDF.PBKDF2Hash.sha256, 60),
                                       ("wycheproof_pbkdf2_hmacsha512_test.json", KDF.PBKDF2Hash.sha512, 58)] {
            let file: WycheproofFile<PBKDF2Test> = try Vectors.load(name)
            let tests = file.testGroups.flatMap(\.tests)
            XCTAssertEqual(tests.count, expected, name)
            for test in tests {
                XCTAssertEqual(test.result, "valid")
                let derived = try KDF.pbkdf2(password: SecureBytes(copying: [UInt8](hex: test.password)),
                                             salt: [UInt8](hex: test.salt), iterations: test.iterationCount,
                                             hash: hash, length: test.dkLen)
                XCTAssertEqual(derived.withUnsafeBytes { Array($0) }.hex, test.dk, "\(name) tcId \(test.tcId)")
            }
        }
    }

    struct RFC7914File: Decodable {
        struct Test: Decodable {
            let tcId: Int
            let password, salt: String
            let iterations: UInt32
            let dkLen: Int
            let dk: String
        }
        let tests: [Test]
    }

    func testPBKDF2RFC7914() throws {
        let file: RFC7914File = try Vectors.load("pbkdf2_hmac_sha256_rfc7914.json")
        XCTAssertEqual(file.tests.count, 2)
        for test in file.tests {
            let derived = try KDF.pbkdf2(password: SecureBytes(copying: [UInt8](hex: test.password)),
                                         salt: [UInt8](hex: test.salt), iterations: test.iterations,
                                         hash: .sha256, length: test.dkLen)
            XCTAssertEqual(derived.withUnsafeBytes { Array($0) }.hex, test.dk, "tcId \(test.tcId)")
        }
    }

    func testPBKDF2ParameterChecks() {
        let password = SecureBytes(copying: Array("pw".utf8))
        XCTAssertThrowsError(try KDF.pbkdf2(password: password, salt: [1], iterations: 0, hash: .sha512, length: 32))
        XCTAssertThrowsError(try KDF.pbkdf2(password: password, salt: [1], iterations: 1, hash: .sha512, length: 0))
        // Stored parameters need a 16-byte salt.
        XCTAssertThrowsError(try KDF.derive(password: password, parameters: .pbkdf2SHA512(iterations: 1, salt: [1, 2])))
    }

    func testDeriveMatchesDirectCalls() throws {
        let password = SecureBytes(copying: Array("correct horse".utf8))
        let salt = [UInt8](repeating: 7, count: 16)
        let viaDerive = try KDF.derive(password: password, parameters: .pbkdf2SHA512(iterations: 1000, salt: salt))
        let direct = try KDF.pbkdf2(password: password, salt: salt, iterations: 1000, hash: .sha512, length: 32)
        XCTAssertTrue(viaDerive.constantTimeEquals(direct))
        let argon = try KDF.derive(password: password, parameters: .argon2id(opsLimit: 1, memLimitBytes: 1 << 20, salt: salt), length: 48)
        XCTAssertEqual(argon.count, 48)
        XCTAssertTrue(argon.constantTimeEquals(try KDF.argon2id(password: password, salt: salt, opsLimit: 1, memLimitBytes: 1 << 20, length: 48)))
    }

    // MARK: Calibration and storage

    func testCalibrationRespectsFloors() {
        guard case let .argon2id(ops, memory, salt) = KDF.calibrateArgon2id(targetSeconds: 0.02, memLimitBytes: 1 << 20, minOpsLimit: 2) else {
            return XCTFail("expected argon2id")
        }
        XCTAssertGreaterThanOrEqual(ops, 2)
        XCTAssertEqual(memory, 1 << 20)
        XCTAssertEqual(salt.count, 16)

        guard case let .pbkdf2SHA512(iterations, pbkdfSalt) = KDF.calibratePBKDF2(targetSeconds: 0.01, minIterations: 1000) else {
            return XCTFail("expected pbkdf2")
        }
        XCTAssertGreaterThanOrEqual(iterations, 1000)
        XCTAssertEqual(pbkdfSalt.count, 16)

        // A generous target scales the work up.
        guard case let .pbkdf2SHA512(more, _) = KDF.calibratePBKDF2(targetSeconds: 0.2, minIterations: 1) else {
            return XCTFail("expected pbkdf2")
        }
        XCTAssertGreaterThan(more, 1000)
    }

    /// Calibration never goes past what a stored parameter set may name (a keyslot reader refuses
    /// more): before, a long target on a fast machine gave Argon2id 120 passes, a vault no
    /// password could open. A floor above the bounds is kept, for the caller to refuse.
    func testCalibrationStaysWithinStoredBounds() {
        guard case let .argon2id(ops, _, _) = KDF.calibrateArgon2id(targetSeconds: 60, memLimitBytes: 8192, minOpsLimit: 1) else {
            return XCTFail("expected argon2id")
        }
        XCTAssertEqual(ops, KDFParameters.argon2idOpsRange.upperBound)
        let floored = KDF.calibrateArgon2id(targetSeconds: 0.001, memLimitBytes: 8192, minOpsLimit: 65)
        XCTAssertNotNil(floored.storageProblem)
        guard case let .pbkdf2SHA512(iterations, _) = KDF.calibratePBKDF2(targetSeconds: 1e9, minIterations: 1000) else {
            return XCTFail("expected pbkdf2")
        }
        XCTAssertEqual(iterations, KDFParameters.pbkdf2IterationsRange.upperBound)
    }

    func testStorageBounds() {
        let salt = [UInt8](repeating: 7, count: 16)
        XCTAssertNil(KDFParameters.argon2id(opsLimit: 1, memLimitBytes: 8192, salt: salt).storageProblem)
        XCTAssertNil(KDFParameters.argon2id(opsLimit: 64, memLimitBytes: 4 << 30, salt: salt).storageProblem)
        XCTAssertNil(KDFParameters.pbkdf2SHA512(iterations: 1000, salt: salt).storageProblem)
        XCTAssertNil(KDFParameters.pbkdf2SHA512(iterations: 100_000_000, salt: salt + salt).storageProblem)
        for bad: KDFParameters in [.argon2id(opsLimit: 0, memLimitBytes: 8192, salt: salt), .argon2id(opsLimit: 65, memLimitBytes: 8192, salt: salt),
                                   .argon2id(opsLimit: 1, memLimitBytes: 8191, salt: salt), .argon2id(opsLimit: 1, memLimitBytes: (4 << 30) + 1, salt: salt),
                                   .argon2id(opsLimit: 1, memLimitBytes: 8192, salt: salt + [0]), .pbkdf2SHA512(iterations: 999, salt: salt),
                                   .pbkdf2SHA512(iterations: 100_000_001, salt: salt), .pbkdf2SHA512(iterations: 1000, salt: Array(salt.prefix(15)))] {
            XCTAssertNotNil(bad.storageProblem, "\(bad)")
        }
    }

    func testParametersCodableRoundTrip() throws {
        let all: [KDFParameters] = [
            .argon2id(opsLimit: 3, memLimitBytes: 64 << 20, salt: Array(0..<16)),
            .pbkdf2SHA512(iterations: 210_000, salt: Array(0..<20)),
        ]
        for parameters in all {
            let data = try JSONEncoder().encode(parameters)
            XCTAssertEqual(try JSONDecoder().decode(KDFParameters.self, from: data), parameters)
            XCTAssertTrue(String(decoding: data, as: UTF8.self).contains("\"algorithm\":\"\(parameters.algorithmName)\""))
        }
        XCTAssertEqual(all.map(\.algorithmName), ["argon2id", "pbkdf2-sha512"])
        let badSalt = Data(#"{"algorithm":"argon2id","opsLimit":3,"memLimitBytes":1048576,"salt":"0011"}"#.utf8)
        XCTAssertThrowsError(try JSONDecoder().decode(KDFParameters.self, from: badSalt))
        let unknown = Data(#"{"algorithm":"scrypt","salt":"00112233445566778899aabbccddeeff"}"#.utf8)
        XCTAssertThrowsError(try JSONDecoder().decode(KDFParameters.self, from: unknown))
    }
}
