import Foundation
import VaultCrypto
import VaultTestSupport
import XCTest
@testable import VaultTPM

/// Sealing and unsealing against a real TPM 2.0 (swtpm): the PIN, its lockout, PCR binding, a
/// TPM of another machine, a TPM that goes away, and damaged objects — each a typed error that
/// says what happened, and never a secret out of a refused object.
final class TPMSealTests: XCTestCase {
    var tpm: SoftwareTPM!

    override func setUpWithError() throws {
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        tpm = try SoftwareTPM()
    }

    override func tearDown() { tpm = nil }

    private func secret() -> SecureBytes { SecureBytes.random(count: 32) }
    private func pin(_ s: String) -> SecureBytes { SecureBytes(copying: Array(s.utf8)) }
    private func bytes(_ s: SecureBytes) -> [UInt8] { s.withUnsafeBytes { Array($0) } }

    func testASealedSecretComesBackAndTheObjectHoldsNoPlainCopy() throws {
        let t = try TPM(tcti: tpm.tcti)
        let s = secret()
        let sealed = try t.seal(s, auth: nil, pcrs: .none)
        XCTAssertFalse(sealed.publicArea.isEmpty)
        XCTAssertFalse(sealed.privateArea.isEmpty)
        let all = sealed.publicArea + sealed.privateArea
        let raw = bytes(s)
        XCTAssertFalse(all.indices.dropLast(raw.count - 1).contains { Array(all[$0..<($0 + raw.count)]) == raw },
                       "the secret must not stand in the sealed object")
        XCTAssertEqual(bytes(try t.unseal(sealed, auth: nil)), raw)
        // The primary is derived, not stored: a new connection unseals too.
        XCTAssertEqual(bytes(try TPM(tcti: tpm.tcti).unseal(sealed, auth: nil)), raw)
    }

    func testAWrongPINSaysHowManyTriesAreLeftAndTheLockoutIsNamed() throws {
        let t = try TPM(tcti: tpm.tcti)
        let s = secret()
        let sealed = try t.seal(s, auth: pin("1234"), pcrs: .none)
        XCTAssertEqual(bytes(try t.unseal(sealed, auth: pin("1234"))), bytes(s))
        let before = try t.lockoutState()
        XCTAssertGreaterThan(before.maxFailures, 0)
        var sawLockout = false
        for attempt in 1...(before.maxFailures + 1) where !sawLockout {
            let outcome = Result { () throws(TPMError) -> SecureBytes in try t.unseal(sealed, auth: pin("0000")) }
            switch outcome {
            case .success: XCTFail("a wrong PIN unsealed")
            case .failure(.wrongPIN(let left)): XCTAssertEqual(left, before.maxFailures - before.failures - attempt, "attempt \(attempt)")
            case .failure(.lockedOut): sawLockout = true
            case .failure(let e): XCTFail("attempt \(attempt): \(e)")
            }
        }
        XCTAssertTrue(sawLockout, "the TPM locks out after \(before.maxFailures) failures")
        XCTAssertThrowsError(try t.unseal(sealed, auth: pin("1234"))) { e in
            guard case TPMError.lockedOut = e else { return XCTFail("in lockout even the right PIN waits: \(e)") }
        }
    }

    func testASlotBoundToAPCRRefusesOnceThePCRChanges() throws {
        let t = try TPM(tcti: tpm.tcti)
        let s = secret()
        let bound = try t.seal(s, auth: nil, pcrs: PCRSelection(list: "16")!)
        let unbound = try t.seal(s, auth: nil, pcrs: .none)
        XCTAssertEqual(bytes(try t.unseal(bound, auth: nil)), bytes(s))
        try t.extendPCR(16, digest: Array(repeating: 0xAB, count: 32))
        XCTAssertThrowsError(try t.unseal(bound, auth: nil)) { XCTAssertEqual($0 as? TPMError, .pcrsChanged) }
        XCTAssertEqual(bytes(try t.unseal(unbound, auth: nil)), bytes(s), "a slot bound to no PCR is untouched")
    }

    func testAnObjectOfAnotherTPMIsRecognised() throws {
        let a = try TPM(tcti: tpm.tcti)
        let sealed = try a.seal(secret(), auth: nil, pcrs: .none)
        let other = try SoftwareTPM()
        let b = try TPM(tcti: other.tcti)
        XCTAssertNotEqual(try a.primaryName(), try b.primaryName(), "each TPM has its own primary")
        XCTAssertEqual(try a.primaryName(), try TPM(tcti: tpm.tcti).primaryName(), "and the same one every time")
        XCTAssertThrowsError(try b.unseal(sealed, auth: nil)) { XCTAssertEqual($0 as? TPMError, .otherTPM) }
    }

    func testATPMThatGoesAwayIsUnreachableNotAHang() throws {
        let t = try TPM(tcti: tpm.tcti)
        let sealed = try t.seal(secret(), auth: nil, pcrs: .none)
        tpm.kill()
        XCTAssertThrowsError(try t.unseal(sealed, auth: nil)) { e in
            guard case TPMError.unreachable = e else { return XCTFail("expected unreachable, got \(e)") }
        }
        XCTAssertThrowsError(try TPM(tcti: tpm.tcti)) { e in
            guard case TPMError.unreachable = e else { return XCTFail("expected unreachable, got \(e)") }
        }
    }

    func testEveryFlippedByteOfASealedObjectIsRefused() throws {
        let t = try TPM(tcti: tpm.tcti)
        let s = secret()
        let sealed = try t.seal(s, auth: nil, pcrs: .none)
        var accepted: [String] = []
        for (area, count) in [("public", sealed.publicArea.count), ("private", sealed.privateArea.count)] {
            for i in 0..<count {
                var bad = sealed
                if area == "public" { bad.publicArea[i] ^= 0x01 } else { bad.privateArea[i] ^= 0x01 }
                if let out = try? t.unseal(bad, auth: nil) {
                    // A flip the TPM cannot see (a field it ignores) still gives the right secret, never another.
                    if bytes(out) != bytes(s) { accepted.append("\(area)[\(i)] gave another secret") }
                    else if area == "private" { accepted.append("\(area)[\(i)]") }
                }
            }
        }
        XCTAssertEqual(accepted, [], "flipped bytes the TPM accepted")
    }

    func testNoDeviceIsNamed() {
        XCTAssertThrowsError(try TPM(tcti: "device:/nonexistent/tpmrm0")) {
            XCTAssertEqual($0 as? TPMError, .noDevice(path: "/nonexistent/tpmrm0"))
        }
        XCTAssertEqual(TPM.devicePath("device"), "/dev/tpmrm0")
        XCTAssertEqual(TPM.devicePath("device:/dev/tpm0"), "/dev/tpm0")
        XCTAssertNil(TPM.devicePath("swtpm:path=/x"))
    }

    func testPCRListsParse() {
        XCTAssertEqual(PCRSelection(list: "7")?.mask, 1 << 7)
        XCTAssertEqual(PCRSelection(list: "7,16")?.indexes, [7, 16])
        XCTAssertEqual(PCRSelection(list: "")?.isEmpty, true)
        XCTAssertNil(PCRSelection(list: "24"))
        XCTAssertNil(PCRSelection(list: "7,,8"))
        XCTAssertNil(PCRSelection(list: "x"))
    }
}
