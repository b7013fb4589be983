import Foundation
import VaultCrypto
import VaultFIDO2
import VaultTestSupport
import XCTest

/// VaultFIDO2 against the software authenticator through libfido2's I/O hook: the credential
/// and its hmac-secret output, and each typed error a user may meet.
final class FIDO2AuthenticatorTests: XCTestCase {
    let rp = "vault"
    let user = Array(repeating: UInt8(7), count: 16)
    let salt = Array(repeating: UInt8(0x5a), count: 32)

    override func setUpWithError() throws {
        try XCTSkipUnless(SoftwareFIDO2.available, "needs python3-fido2 and python3-cryptography")
    }

    func pin(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    func open(_ key: SoftwareFIDO2) throws -> FIDO2Authenticator { try FIDO2Authenticator(testSocket: key.socket, timeoutMs: 10_000) }

    func testTheOutputIsTheCredentialsForItsSaltAndTwoSaltsGiveBothInOneTouch() throws {
        let key = try SoftwareFIDO2()
        let a = try open(key)
        let info = try a.info()
        XCTAssertTrue(info.ctap2 && info.hmacSecret && info.pin == .notSet, "\(info)")
        let cred = try a.makeCredential(rp: rp, userId: user, pin: nil)
        let one = try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: nil)
        XCTAssertEqual(one.count, 32)
        XCTAssertTrue(one.constantTimeEquals(try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: nil)), "the same salt, the same output")
        let other = Array(repeating: UInt8(0x11), count: 32)
        let two = try a.hmacSecret(rp: rp, credentialId: cred, salt: salt + other, pin: nil)
        XCTAssertEqual(two.count, 64)
        let second = try a.hmacSecret(rp: rp, credentialId: cred, salt: other, pin: nil)
        two.withUnsafeBytes { b in
            XCTAssertTrue(SecureBytes(copying: UnsafeRawBufferPointer(rebasing: b[0..<32])).constantTimeEquals(one))
            XCTAssertTrue(SecureBytes(copying: UnsafeRawBufferPointer(rebasing: b[32..<64])).constantTimeEquals(second))
        }
        XCTAssertFalse(one.constantTimeEquals(second), "another salt, another output")
        XCTAssertThrowsError(try a.hmacSecret(rp: "vault2", credentialId: cred, salt: salt, pin: nil)) {
            XCTAssertEqual($0 as? FIDO2Error, .otherAuthenticator, "the credential is bound to its relying party")
        }
        let anotherKey = try SoftwareFIDO2()
        let another = try open(anotherKey)
        XCTAssertThrowsError(try another.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: nil)) {
            XCTAssertEqual($0 as? FIDO2Error, .otherAuthenticator)
        }
        withExtendedLifetime((key, anotherKey)) {}   // the authenticators run until here
    }

    func testAPINIsNeededToEnrollGivesAnotherOutputAndIsBlockedAfterTooManyWrongOnes() throws {
        let key = try SoftwareFIDO2(pin: "2468")
        var a = try open(key)
        XCTAssertEqual(try a.info().pin, .set)
        XCTAssertThrowsError(try a.makeCredential(rp: rp, userId: user, pin: nil)) { XCTAssertEqual($0 as? FIDO2Error, .pinRequired) }
        let cred = try a.makeCredential(rp: rp, userId: user, pin: pin("2468"))
        let verified = try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: pin("2468"))
        let present = try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: nil)
        XCTAssertFalse(verified.constantTimeEquals(present), "with user verification the key answers another output (CTAP 2.1)")
        XCTAssertEqual(try a.pinRetries(), 8)
        for left in [7, 6] {
            XCTAssertThrowsError(try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: pin("1357"))) {
                XCTAssertEqual($0 as? FIDO2Error, .wrongPIN(retriesLeft: left))
            }
        }
        XCTAssertThrowsError(try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: pin("1357"))) {
            XCTAssertEqual($0 as? FIDO2Error, .pinBlocked(untilReplug: true), "three in a row: until replugged")
        }
        // Replugged: the retries go on down to 0, then the PIN is blocked for good.
        var plugged = key
        for _ in 0..<5 where try a.pinRetries() > 0 {
            a.close()
            plugged.stop()
            plugged = try SoftwareFIDO2(state: key.state)
            a = try open(plugged)
            _ = try? a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: pin("1357"))
        }
        XCTAssertEqual(try a.pinRetries(), 0)
        XCTAssertThrowsError(try a.hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: pin("2468"))) {
            XCTAssertEqual($0 as? FIDO2Error, .pinBlocked(untilReplug: false))
        }
        withExtendedLifetime((key, plugged)) {}
    }

    func testNoTouchNoKeyAndAMalformedRequestAreNamed() throws {
        let key = try SoftwareFIDO2()
        let cred = try open(key).makeCredential(rp: rp, userId: user, pin: nil)
        key.stop()
        XCTAssertThrowsError(try open(key)) { XCTAssertEqual($0 as? FIDO2Error, .noDevice) }
        for presence in ["timeout", "deny"] {
            let untouched = try SoftwareFIDO2(state: key.state, presence: presence)
            defer { untouched.stop() }
            XCTAssertThrowsError(try open(untouched).hmacSecret(rp: rp, credentialId: cred, salt: salt, pin: nil), presence) {
                XCTAssertEqual($0 as? FIDO2Error, .notTouched, presence)
            }
        }
        let again = try SoftwareFIDO2(state: key.state)
        XCTAssertThrowsError(try open(again).hmacSecret(rp: rp, credentialId: cred, salt: [1, 2, 3], pin: nil)) {
            guard case .malformed = $0 as? FIDO2Error else { return XCTFail("\($0)") }
        }
        withExtendedLifetime(again) {}
    }

    /// clientPIN setPIN, from python-fido2 (an independent client): libfido2 then sees the PIN
    /// and needs it.
    func testAPINSetByAnotherClientIsTheOneLibfido2Needs() throws {
        let key = try SoftwareFIDO2()
        let opener = URL(fileURLWithPath: SoftwareFIDO2.script).deletingLastPathComponent().appendingPathComponent("independent-fido2-slot.py").path
        let program = """
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("opener", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        ctap = m.Ctap2(m.CtapHidDevice(m.HidDescriptor(sys.argv[2], 0, 0, 64, 64), m.SocketConnection(sys.argv[2])))
        m.ClientPin(ctap).set_pin("2468")
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: SoftwareFIDO2.python)
        p.arguments = ["-c", program, opener, key.socket]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "python-fido2 set the PIN")
        let a = try open(key)
        XCTAssertEqual(try a.info().pin, .set)
        XCTAssertThrowsError(try a.makeCredential(rp: rp, userId: user, pin: pin("1357"))) {
            XCTAssertEqual($0 as? FIDO2Error, .wrongPIN(retriesLeft: 7))
        }
        XCTAssertFalse(try a.makeCredential(rp: rp, userId: user, pin: pin("2468")).isEmpty)
        withExtendedLifetime(key) {}
    }
}
