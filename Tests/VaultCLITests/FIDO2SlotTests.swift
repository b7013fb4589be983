import Foundation
import VaultTestSupport
import XCTest

/// The fido2 keyslot through the `vault` binary, against a software FIDO2 authenticator
/// (scripts/soft-fido2.py, its own per test, reached through VAULT_TEST_FIDO2_SOCKET): enroll,
/// unlock with a touch and no password, the PIN, and every way the slot can fail to open the
/// vault ends in the password with one line that names why. What only a real key shows (HID,
/// a real touch, the key's own PIN lockout) is listed in README "FIDO2 security keys".
final class FIDO2SlotTests: XCTestCase {
    var h: CLIHarness!
    var key: SoftwareFIDO2!

    override func setUpWithError() throws {
        try XCTSkipUnless(SoftwareFIDO2.available, "needs python3-fido2 and python3-cryptography (scripts/install-deps.sh installs them)")
        key = try SoftwareFIDO2()
        h = try CLIHarness(keyring: false)
        h.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        try h.initVault()
    }

    override func tearDown() { h = nil; key = nil }

    /// `vault unlock ARGS --json`; the result and whether the security key opened the vault.
    func unlock(_ args: [String]) throws -> (CLIHarness.Result, viaFIDO2: Bool) {
        let (r, via) = try h.unlockedWith(args)
        return (r, via == "fido2")
    }

    func fido2Slots() throws -> [[String: Any]] { try h.slots(ofType: "fido2") }

    /// The keyslot file's fido2 slot edited by `edit` (checksum fixed, MAC kept).
    func editFIDO2Slot(_ edit: @escaping (inout [String: Any]) -> Void) throws {
        let url = h.home.appendingPathComponent("keyslots")
        let bytes = try reformattedKeyslotBytes(Array(try Data(contentsOf: url))) { body in
            var slots = body["slots"] as! [[String: Any]]
            let i = slots.firstIndex { $0["type"] as? String == "fido2" }!
            var record = slots[i]["fido2"] as! [String: Any]
            edit(&record)
            slots[i]["fido2"] = record
            body["slots"] = slots
        }
        try Data(bytes).write(to: url)
    }

    func testATouchUnlocksWithNoPasswordAndTheSlotIsListedShownAndRemoved() throws {
        let added = try h.ok(["key", "add-fido2", "--json"] + h.pw)
        XCTAssertTrue(added.stderr.contains("Touch the security key"), added.stderr)
        let id = try XCTUnwrap((added.json as? [String: Any])?["slot"] as? String)
        XCTAssertTrue(id.hasPrefix("fido2-"), id)
        let slot = try XCTUnwrap(try fido2Slots().first)
        XCTAssertEqual(slot["pin"] as? Bool, false)
        XCTAssertEqual(slot["relyingParty"] as? String, "vault")
        XCTAssertTrue(try h.ok(["key", "list"] + h.pw).out.contains("security key, no PIN, touch"))
        let status = try h.ok(["status", "--json"] + h.pw)
        XCTAssertEqual((status.json as? [String: Any])?["keyProtection"] as? String, "hardware (FIDO2)", status.out)
        let r = try h.withoutTerminal(["unlock", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.json as? [String: Any])?["unlockedWith"] as? String, "fido2", r.out)
        XCTAssertTrue(r.stderr.contains("Touch the security key"), r.stderr)
        XCTAssertEqual(try h.withoutTerminal(["unlock", "--no-fido2"]).status, 2, "--no-fido2 asks for the password: no terminal here")
        XCTAssertEqual(try h.run(["unlock"] + (try h.wrongPassword)).status, 3, "--password-file alone does not ask the key")
        // The slot alone is no way back in: the last password slot stays.
        XCTAssertEqual(try h.run(["key", "remove", "password-1"] + h.pw).status, 5)
        try h.ok(["key", "remove", id] + h.pw)
        XCTAssertEqual(try fido2Slots().count, 0)
        XCTAssertEqual(try h.withoutTerminal(["unlock"]).status, 2, "no slot: the password is asked (no terminal here)")
    }

    func testWithAPINTheSlotNeedsItAndAWrongPINCountsAsAFailedUnlock() throws {
        key = try SoftwareFIDO2(pin: "2468")
        h.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        try h.usePolicy(#"{"maxFailedUnlocks": 20}"#)
        let noPIN = try h.withoutTerminal(["key", "add-fido2"] + h.pw)
        XCTAssertNotEqual(noPIN.status, 0, "the key has a PIN and there is no terminal to ask it: \(noPIN.stderr)")
        XCTAssertEqual(try fido2Slots().count, 0)
        try h.ok(["key", "add-fido2", "--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(try fido2Slots().first?["pin"] as? Bool, true)
        let (right, via) = try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword))
        XCTAssertEqual(right.status, 0, right.stderr)
        XCTAssertTrue(via, "the PIN and a touch opened it")
        let (wrong, viaWrong) = try unlock(["--pin-file", try h.wrongPinFile] + h.pw)
        XCTAssertEqual(wrong.status, 0, "the password opens: \(wrong.stderr)")
        XCTAssertFalse(viaWrong)
        XCTAssertTrue(wrong.stderr.contains("FIDO2 slot not used: wrong FIDO2 PIN; 7 tries left"), wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("failed attempt 1 of 20"), "a wrong PIN is a failed unlock: \(wrong.stderr)")
        XCTAssertEqual(try h.run(["unlock", "--pin-file", try h.wrongPinFile] + (try h.wrongPassword)).status, 3, "nothing else opens it")
    }

    func testAnAbsentOrUntouchedKeyFallsBackToThePasswordWithTheReason() throws {
        try h.ok(["key", "add-fido2"] + h.pw)
        key.stop()
        let (gone, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(gone.status, 0, gone.stderr)
        XCTAssertFalse(via)
        XCTAssertTrue(gone.stderr.contains("FIDO2 slot not used: no FIDO2 security key found; unlocking with the password"), gone.stderr)
        let noTerminal = try h.withoutTerminal(["unlock"])
        XCTAssertEqual(noTerminal.status, 3, noTerminal.stderr)
        XCTAssertTrue(noTerminal.stderr.contains("no FIDO2 security key found") && noTerminal.stderr.contains("--password-file"), noTerminal.stderr)
        // The same key plugged in again, never touched.
        let untouched = try SoftwareFIDO2(state: key.state, presence: "timeout")
        h.env["VAULT_TEST_FIDO2_SOCKET"] = untouched.socket
        let (late, viaLate) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(late.status, 0, late.stderr)
        XCTAssertFalse(viaLate)
        XCTAssertTrue(late.stderr.contains("not touched in time"), late.stderr)
        untouched.stop()
        // Pulled out while it waits for the touch.
        let pulled = try SoftwareFIDO2(state: key.state, presence: "unplug")
        h.env["VAULT_TEST_FIDO2_SOCKET"] = pulled.socket
        let (midCall, viaMidCall) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(midCall.status, 0, midCall.stderr)
        XCTAssertFalse(viaMidCall)
        XCTAssertTrue(midCall.stderr.contains("FIDO2 slot not used: the FIDO2 security key did not answer"), midCall.stderr)
        pulled.stop()
        let again = try SoftwareFIDO2(state: key.state)
        h.env["VAULT_TEST_FIDO2_SOCKET"] = again.socket
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaFIDO2, "the same key opens it")
    }

    func testTheSlotOfAnotherKeyIsNamedAndEitherOfTwoEnrolledKeysOpens() throws {
        try h.ok(["key", "add-fido2"] + h.pw)
        let other = try SoftwareFIDO2()   // another security key: another secret
        h.env["VAULT_TEST_FIDO2_SOCKET"] = other.socket
        let (r, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(via)
        XCTAssertTrue(r.stderr.contains("the FIDO2 slot belongs to another security key"), r.stderr)
        // Enrolled too, a spare: either key opens the vault.
        try h.ok(["key", "add-fido2"] + h.pw)
        XCTAssertEqual(try fido2Slots().count, 2)
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaFIDO2, "the second key")
        h.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaFIDO2, "the first key")
    }

    /// The slot's fields are bound into the wrap's AAD: a field the key still answers for (the
    /// same bytes in upper-case hex) is refused all the same; a changed salt, relying party, PIN
    /// flag or credential id never opens the vault.
    func testATamperedSlotFieldIsRefused() throws {
        try h.ok(["key", "add-fido2"] + h.pw)
        let url = h.home.appendingPathComponent("keyslots")
        let pristine = try Data(contentsOf: url)
        let edits: [(String, (inout [String: Any]) -> Void)] = [
            ("credential id in upper case", { $0["credentialId"] = ($0["credentialId"] as! String).uppercased() }),
            ("salt in upper case", { $0["salt"] = ($0["salt"] as! String).uppercased() }),
            ("another salt", { $0["salt"] = String(repeating: "ab", count: 32) }),
            ("another relying party", { $0["rp"] = "vault2" }),
            ("the PIN flag set", { $0["pin"] = true }),
            ("a short credential id", { $0["credentialId"] = String(($0["credentialId"] as! String).dropLast(2)) }),
        ]
        for (what, edit) in edits {
            try pristine.write(to: url)
            try editFIDO2Slot(edit)
            let (r, via) = try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword))
            XCTAssertFalse(via, what)
            XCTAssertTrue([3, 6].contains(r.status), "\(what): \(r.status) \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("FIDO2"), "\(what): the reason is named: \(r.stderr)")
        }
        try pristine.write(to: url)
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaFIDO2, "the pristine slot opens")
    }

    /// `vault key rotate` wraps the slot again for the new key under a fresh salt (one touch).
    func testRotationWrapsTheSlotAgainWithAFreshSalt() throws {
        try h.ok(["key", "add-fido2"] + h.pw)
        let salt = { () throws -> String? in
            let lines = try Data(contentsOf: self.h.home.appendingPathComponent("keyslots")).split(separator: 10)
            let body = try JSONSerialization.jsonObject(with: Data(lines[0])) as! [String: Any]
            return ((body["slots"] as! [[String: Any]]).first { $0["type"] as? String == "fido2" }?["fido2"] as? [String: Any])?["salt"] as? String
        }
        let before = try salt()
        let id = try XCTUnwrap(try fido2Slots().first?["id"] as? String)
        let r = try h.withoutTerminal(["key", "rotate"] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.out.contains("Wrapped FIDO2 slot \(id) again for the new key"), r.out)
        XCTAssertNotEqual(try salt(), before)
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaFIDO2, "the slot opens the new key")
        // With the key unplugged the slot is dropped, named.
        key.stop()
        let gone = try h.withoutTerminal(["key", "rotate"] + h.pw)
        XCTAssertEqual(gone.status, 0, gone.stderr)
        XCTAssertTrue(gone.stderr.contains("no FIDO2 security key found") && gone.stderr.contains("vault key add-fido2"), gone.stderr)
        XCTAssertEqual(try fido2Slots().count, 0)
    }

    /// scripts/independent-fido2-slot.py opens the slot from SECURITY.md alone, with python-fido2
    /// as the client (the PIN composed and decomposed: NFC both ways), and refuses a wrong PIN.
    func testAnIndependentProgramOpensTheSlot() throws {
        key = try SoftwareFIDO2(pin: "caf\u{E9}1")
        h.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        try h.ok(["key", "add-fido2", "--pin-file", try h.localFile("composed", Data("caf\u{E9}1\n".utf8))] + h.pw)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/independent-fido2-slot.py").path
        let args = [script, h.home.path, "--socket", key.socket, "--pin-file"]
        let ok = try h.run(args + [try h.localFile("decomposed", Data("cafe\u{301}1\n".utf8))], program: SoftwareFIDO2.python)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.out.contains("opens the master key, and the keyslot MAC verifies"), ok.out)
        let wrong = try h.run(args + [try h.wrongPinFile], program: SoftwareFIDO2.python)
        XCTAssertEqual(wrong.status, 1, wrong.out)
        XCTAssertTrue(wrong.stderr.contains("PIN_INVALID"), wrong.stderr)
    }

    /// The envelope on the server never holds the fido2 slot; a change another device makes is
    /// adopted and keeps it; a rotation made elsewhere says what to do.
    func testTheEnvelopeOnTheServerHasNoFIDO2Slot() throws {
        h.useFastRetry()
        let server = try ServerHarness(root: h.root)
        try h.login(to: server)
        try h.ok(["key", "add-fido2"] + h.pw)
        func envelope() throws -> String { try XCTUnwrap(server.curl("GET", "/v1/keys/envelope").json["envelope"] as? String) }
        XCTAssertFalse(try envelope().contains("fido2"), "the slot never travels")
        let b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        _ = try b.ok(["key", "add-recovery"] + b.pw)
        try h.ok(["sync"] + h.pw)
        let types = try XCTUnwrap(try h.ok(["key", "list", "--json"] + h.pw).json as? [[String: Any]]).compactMap { $0["type"] as? String }
        XCTAssertEqual(types.sorted(), ["fido2", "password", "recovery"], "adopted B's slot, kept this device's")
        XCTAssertFalse(try envelope().contains("fido2"))
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaFIDO2, "the FIDO2 slot still opens")
        try b.ok(["key", "rotate"] + b.pw)
        let stale = try h.withoutTerminal(["unlock"])
        XCTAssertEqual(stale.status, 3, stale.stderr)
        XCTAssertTrue(stale.stderr.contains("rotated on another device") && stale.stderr.contains("vault unlock --no-tpm --no-fido2"), stale.stderr)
        let caughtUp = try h.ok(["unlock", "--no-tpm", "--no-fido2"] + h.pw)
        XCTAssertTrue(caughtUp.stderr.contains("now uses epoch 2"), caughtUp.stderr)
    }

    /// `requireHardwareKey`: a FIDO2 slot is a hardware key (with a keyring: without one, every
    /// command needs the password, which the policy refuses); with the key absent the password is
    /// refused, with the reason.
    func testRequireHardwareKeyAcceptsTheFIDO2SlotAndRefusesThePasswordWithoutIt() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service")
        let k = try CLIHarness(keyring: true)
        k.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        try k.initVault()
        try k.ok(["key", "add-fido2"] + k.pw)
        try k.ok(["unlock"] + k.pw)
        try k.usePolicy(#"{"requireHardwareKey": true}"#)
        let check = try k.ok(["policy", "check"]).out
        XCTAssertTrue(check.contains("ok   hardware key: unlocks go through a FIDO2 security key (hardware (FIDO2))"), check)
        try k.ok(["lock"])
        let r = try k.withoutTerminal(["unlock", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.json as? [String: Any])?["unlockedWith"] as? String, "fido2", r.out)
        try k.ok(["ls"])
        try k.ok(["lock"])
        key.stop()
        let refused = try k.run(["unlock", "--pin-file", try k.pinFile] + k.pw)
        XCTAssertEqual(refused.status, 11, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("the FIDO2 slot did not open the vault (no FIDO2 security key found)")
                      && refused.stderr.contains("requireHardwareKey"), refused.stderr)
    }

    /// `hardwareKeyPin`: a key without a PIN is refused before any touch; with its PIN it enrolls.
    func testHardwareKeyPinRefusesAKeyWithoutAPIN() throws {
        try h.ok(["key", "add-fido2"] + h.pw)
        try h.usePolicy(#"{"hardwareKeyPin": true}"#)
        let refused = try h.run(["key", "add-fido2"] + h.pw)
        XCTAssertEqual(refused.status, 11, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("hardwareKeyPin") && !refused.stderr.contains("Touch"), refused.stderr)
        let check = try h.run(["policy", "check"] + h.pw)
        XCTAssertTrue(check.out.contains("use no PIN"), check.out)
        key = try SoftwareFIDO2(pin: "2468")
        h.env["VAULT_TEST_FIDO2_SOCKET"] = key.socket
        try h.ok(["key", "add-fido2", "--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(try fido2Slots().map { $0["pin"] as? Bool }, [false, true])
    }
}
