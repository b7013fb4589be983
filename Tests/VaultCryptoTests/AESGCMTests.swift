import XCTest
import VaultTestSupport
@testable import VaultCrypto

final class AESGCMTests: XCTestCase {
    struct GCMTest: Decodable {
        let tcId: Int
        let key, iv, aad, msg, ct, tag: String
        let result: String
    }

    /// The 66 Wycheproof tests that fit AES-256-GCM with a 96-bit nonce and 128-bit tag.
    private func wycheproof256() throws -> [GCMTest] {
        let file: WycheproofFile<GCMTest> = try Vectors.load("wycheproof_aes_gcm_test.json")
        return file.testGroups
            .filter { $0.keySize == 256 && $0.ivSize == 96 && $0.tagSize == 128 }
            .flatMap(\.tests)
    }

    func testWycheproofAllBackends() throws {
        let tests = try wycheproof256()
        XCTAssertEqual(tests.count, 66)
        XCTAssertEqual(tests.filter { $0.result == "valid" }.count, 39)
        XCTAssertEqual(tests.filter { $0.result == "invalid" }.count, 27)
        for backend in AESGCMKey.Backend.allCases {
            guard backend.isAvailable else {
                print("AES-GCM backend \(backend.name) unavailable here; skipped")
                continue
            }
            var valid = 0, rejected = 0
            for test in tests {
                let key = try AESGCMKey(SecureBytes(copying: [UInt8](hex: test.key)), backend: backend)
                let iv = [UInt8](hex: test.iv), aad = [UInt8](hex: test.aad), msg = [UInt8](hex: test.msg)
                let sealed = [UInt8](hex: test.ct) + [UInt8](hex: test.tag)
                let label = "\(backend.name) tcId \(test.tcId)"
                if test.result == "valid" {
                    XCTAssertEqual(try key.seal(nonce: iv, plaintext: msg, aad: aad), sealed, label)
                    let opened = try key.open(nonce: iv, ciphertextAndTag: sealed, aad: aad)
                    XCTAssertEqual(opened.withUnsafeBytes { Array($0) }, msg, label)
                    valid += 1
                } else {
                    XCTAssertThrowsCryptoError(try key.open(nonce: iv, ciphertextAndTag: sealed, aad: aad), label) {
                        if case CryptoError.authenticationFailed = $0 { true } else { false }
                    }
                    // The buffer API must leave no unauthenticated plaintext behind.
                    var output = [UInt8](repeating: 0xAA, count: max(sealed.count - 16, 0))
                    XCTAssertThrowsError(try sealed.withUnsafeBytes { ct in
                        try aad.withUnsafeBytes { ad in
                            try output.withUnsafeMutableBytes { out in
                                try key.open(nonce: iv, ciphertextAndTag: ct, aad: ad, into: out)
                            }
                        }
                    }, label)
                    XCTAssertTrue(output.allSatisfy { $0 == 0 }, "\(label): output not wiped")
                    rejected += 1
                }
            }
            XCTAssertEqual(valid, 39, backend.name)
            XCTAssertEqual(rejected, 27, backend.name)
        }
    }

    func testBackendsAgreeOnRandomMessages() throws {
        let backends = AESGCMKey.Backend.allCases.filter(\.isAvailable)
        guard backends.count == 2 else { throw XCTSkip("only one AES-GCM backend available") }
        var random = SeededGenerator(seed: 7)
        for size in [0, 1, 15, 16, 17, 255, 4096, 65536, 65536 + 13] {
            let keyBytes = SecureBytes(copying: random.bytes(32))
            let nonce = random.bytes(12), aad = random.bytes(size % 61), message = random.bytes(size)
            let a = try AESGCMKey(keyBytes, backend: backends[0])
            let b = try AESGCMKey(keyBytes, backend: backends[1])
            let sealed = try a.seal(nonce: nonce, plaintext: message, aad: aad)
            XCTAssertEqual(sealed, try b.seal(nonce: nonce, plaintext: message, aad: aad), "size \(size)")
            XCTAssertEqual(try b.open(nonce: nonce, ciphertextAndTag: sealed, aad: aad).withUnsafeBytes { Array($0) }, message)
        }
    }

    /// An engine that fails after writing output (as OpenSSL may, after EVP_DecryptUpdate) leaves
    /// nothing of it: the unverified plaintext is zeroed before the error reaches the caller.
    func testAnEngineThatThrowsPartWayLeavesTheOutputZeroed() throws {
        final class FailingEngine: AESGCMEngine, @unchecked Sendable {
            func seal(nonce: UnsafeRawPointer, plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws {}
            func open(nonce: UnsafeRawPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawPointer, aad: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer) throws -> Bool {
                output.initializeMemory(as: UInt8.self, repeating: 0x5A, count: ciphertext.count)
                throw CryptoError.internalFailure("set tag failed")
            }
        }
        let key = AESGCMKey(engine: FailingEngine())
        let sealed = [UInt8](repeating: 1, count: 64 + AESGCMKey.tagSize), nonce = [UInt8](repeating: 0, count: 12)
        var out = [UInt8](repeating: 0xEE, count: 80)
        XCTAssertThrowsError(try sealed.withUnsafeBytes { ct in
            try out.withUnsafeMutableBytes { o in try key.open(nonce: nonce, ciphertextAndTag: ct, aad: UnsafeRawBufferPointer(start: nil, count: 0), into: o) }
        }) { XCTAssertFalse("\($0)".contains("authentication"), "the engine's own error comes through: \($0)") }
        XCTAssertEqual(Array(out[..<64]), [UInt8](repeating: 0, count: 64))
        XCTAssertEqual(Array(out[64...]), [UInt8](repeating: 0xEE, count: 16), "only the plaintext region is touched")
    }

    func testParameterChecks() throws {
        XCTAssertThrowsError(try AESGCMKey(SecureBytes(count: 16)))
        let key = try AESGCMKey(SecureBytes.random(count: 32))
        XCTAssertThrowsError(try key.seal(nonce: [0], plaintext: [1], aad: []))
        XCTAssertThrowsError(try key.open(nonce: [UInt8](repeating: 0, count: 12), ciphertextAndTag: [1, 2, 3], aad: []))
        var small = [UInt8](repeating: 0, count: 10)
        XCTAssertThrowsError(try small.withUnsafeMutableBytes { out in
            try [UInt8](repeating: 0, count: 10).withUnsafeBytes { pt in
                try key.seal(nonce: [UInt8](repeating: 0, count: 12), plaintext: pt, aad: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
            }
        })
        XCTAssertTrue(["openssl-evp", "libsodium-aesni"].contains(AESGCMKey.backendName))
    }

    func testConcurrentUseOfOneKey() throws {
        let key = try AESGCMKey(SecureBytes.random(count: 32))
        let message = [UInt8](repeating: 0x5A, count: 10_000)
        let nonce = [UInt8](repeating: 1, count: 12)
        let expected = try key.seal(nonce: nonce, plaintext: message, aad: [9])
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            let sealed = try? key.seal(nonce: nonce, plaintext: message, aad: [9])
            XCTAssertEqual(sealed, expected)
            let opened = try? key.open(nonce: nonce, ciphertextAndTag: expected, aad: [9])
            XCTAssertEqual(opened?.withUnsafeBytes { Array($0) }, message)
        }
    }
}
