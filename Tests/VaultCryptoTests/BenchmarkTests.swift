import Foundation
import XCTest
@testable import VaultCrypto

/// Throughput measurements; skipped unless VAULT_BENCH=1 (run them in release:
/// `VAULT_BENCH=1 swift test -c release --filter VaultCryptoTests.BenchmarkTests`).
/// Compare the AES-GCM lines with `openssl speed -evp aes-256-gcm -bytes 65536` (which prints
/// thousands of bytes per second).
final class BenchmarkTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["VAULT_BENCH"] == "1", "set VAULT_BENCH=1 to run benchmarks")
    }

    private let messageSize = 65536

    /// Bytes per second of `body`, which processes `bytesPerCall` bytes, run for about `seconds`.
    private func rate(bytesPerCall: Int, seconds: Double = 2, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<50 { try body() }   // warm up
        let clock = ContinuousClock()
        var calls = 0
        let start = clock.now
        var elapsed = 0.0
        repeat {
            for _ in 0..<100 { try body() }
            calls += 100
            let d = clock.now - start
            elapsed = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        } while elapsed < seconds
        return Double(calls * bytesPerCall) / elapsed
    }

    private func report(_ label: String, _ bytesPerSecond: Double) {
        print(String(format: "BENCH %-44@ %8.0f MB/s (%.0fk bytes/s)", label as NSString, bytesPerSecond / 1e6, bytesPerSecond / 1e3))
    }

    func testAESGCMBackends() throws {
        let plaintext = [UInt8](repeating: 0x42, count: messageSize)
        let aad = [UInt8](repeating: 7, count: 57)
        var output = [UInt8](repeating: 0, count: messageSize + 16)
        var opened = [UInt8](repeating: 0, count: messageSize)
        let nonce = [UInt8](repeating: 3, count: 12)
        for backend in AESGCMKey.Backend.allCases where backend.isAvailable {
            let key = try AESGCMKey(SecureBytes.random(count: 32), backend: backend)
            let sealRate = try plaintext.withUnsafeBytes { pt in
                try aad.withUnsafeBytes { ad in
                    try output.withUnsafeMutableBytes { out in
                        try rate(bytesPerCall: messageSize) { _ = try key.seal(nonce: nonce, plaintext: pt, aad: ad, into: out) }
                    }
                }
            }
            report("AES-256-GCM seal 64 KiB \(backend.name)", sealRate)
            let openRate = try output.withUnsafeBytes { ct in
                try aad.withUnsafeBytes { ad in
                    try opened.withUnsafeMutableBytes { out in
                        try rate(bytesPerCall: messageSize) { _ = try key.open(nonce: nonce, ciphertextAndTag: ct, aad: ad, into: out) }
                    }
                }
            }
            report("AES-256-GCM open 64 KiB \(backend.name)", openRate)
            // Fixed cost per message (IV setup, AAD, tag, lock): seal 0 bytes.
            let perCall = try aad.withUnsafeBytes { ad in
                try output.withUnsafeMutableBytes { out in
                    try rate(bytesPerCall: 1, seconds: 1) {
                        _ = try key.seal(nonce: nonce, plaintext: UnsafeRawBufferPointer(start: nil, count: 0), aad: ad, into: out)
                    }
                }
            }
            print(String(format: "BENCH AES-256-GCM fixed cost per message %@: %.0f ns", backend.name as NSString, 1e9 / perCall))
        }
    }

    func testSHA256() {
        let data = [UInt8](repeating: 0x42, count: messageSize)
        var hasher = SHA256Hasher()
        let r = data.withUnsafeBytes { buffer in rate(bytesPerCall: messageSize) { hasher.update(buffer) } }
        _ = hasher.finalize()
        report("SHA256Hasher 64 KiB updates", r)
    }

    func testSealedBlobWriteAndStream() throws {
        let total = 256 << 20
        let chunk = [UInt8](repeating: 0x42, count: 1 << 20)
        let wrapKey = SecureBytes.random(count: 32)
        let vaultId = [UInt8](repeating: 1, count: 16), blobId = [UInt8](repeating: 2, count: 16)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vault-bench-\(UUID().uuidString)")
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: url) }
        let fd = open(url.path, O_RDWR)
        defer { close(fd) }

        // Writer into a discarding sink: crypto + hashing cost only.
        let clock = ContinuousClock()
        var start = clock.now
        let discard = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 0, wrapKey: wrapKey) { _ in }
        for _ in 0..<(total / chunk.count) { try discard.write(chunk) }
        _ = try discard.finish()
        report("SealedBlobWriter 256 MiB (discarding sink)", Double(total) / seconds(clock.now - start))

        start = clock.now
        let writer = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 0, wrapKey: wrapKey) { buffer in
            var done = 0
            while done < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress! + done, buffer.count - done)
                precondition(n > 0)
                done += n
            }
        }
        for _ in 0..<(total / chunk.count) { try writer.write(chunk) }
        _ = try writer.finish()
        report("SealedBlobWriter 256 MiB (file sink, no fsync)", Double(total) / seconds(clock.now - start))

        var st = stat()
        fstat(fd, &st)
        start = clock.now
        let reader = try SealedBlobReader(fileDescriptor: fd, fileSize: UInt64(st.st_size), wrapKey: wrapKey,
                                          expectedVaultId: vaultId, expectedBlobId: blobId)
        var streamed = 0
        try reader.stream { streamed += $0.count }
        XCTAssertEqual(streamed, total)
        report("SealedBlobReader.stream 256 MiB (page cache)", Double(total) / seconds(clock.now - start))
    }

    private func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}
