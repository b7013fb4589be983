import Foundation
import VaultTestSupport
import VaultTPM
import XCTest

/// The tpm2 keyslot through the `vault` binary, against a real TPM 2.0 (swtpm, its own per
/// test): enroll, unlock with no password or with the PIN, and every way the slot can fail to
/// open the vault ends in the password, with one line that names why.
final class TPMSlotTests: XCTestCase {
    var h: CLIHarness!
    var tpm: SoftwareTPM!

    override func setUpWithError() throws {
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        tpm = try SoftwareTPM()
        h = try CLIHarness(keyring: false)
        h.env["VAULT_TPM_TCTI"] = tpm.tcti
        try h.initVault()
    }

    override func tearDown() { h = nil; tpm = nil }

    /// `vault unlock ARGS --json`; the result and whether the TPM opened the vault.
    func unlock(_ args: [String]) throws -> (CLIHarness.Result, viaTPM: Bool) {
        let (r, via) = try h.unlockedWith(args)
        return (r, via == "tpm2")
    }

    func tpmSlots() throws -> [[String: Any]] { try h.slots(ofType: "tpm2") }

    func testWithoutAPINTheTPMUnlocksWithNoPasswordAndTheSlotIsNoWayBackIn() throws {
        let added = try h.ok(["key", "add-tpm", "--json"] + h.pw)
        let id = try XCTUnwrap((added.json as? [String: Any])?["slot"] as? String)
        XCTAssertTrue(id.hasPrefix("tpm2-"), id)
        let slot = try XCTUnwrap(try tpmSlots().first)
        XCTAssertEqual(slot["pin"] as? Bool, false)
        XCTAssertEqual(slot["pcrs"] as? [Int], [])
        XCTAssertEqual(slot["machine"] as? String, "this machine")
        XCTAssertTrue(try h.ok(["key", "list"] + h.pw).out.contains("no PIN, no PCRs, this machine"))
        let r = try h.withoutTerminal(["unlock", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.json as? [String: Any])?["unlockedWith"] as? String, "tpm2", r.out)
        // A script's --password-file is used as before: the TPM is not asked (a wrong one fails).
        XCTAssertEqual(try h.run(["unlock"] + (try h.wrongPassword)).status, 3, "--password-file alone does not ask the TPM")
        XCTAssertEqual(try h.withoutTerminal(["unlock", "--no-tpm"]).status, 2, "--no-tpm asks for the password: no terminal here")
        // The slot alone is no way back in: the last password slot stays.
        let last = try h.run(["key", "remove", "password-1"] + h.pw)
        XCTAssertEqual(last.status, 5, last.stderr)
        try h.ok(["key", "remove", id] + h.pw)
        XCTAssertEqual(try tpmSlots().count, 0)
        XCTAssertEqual(try h.withoutTerminal(["unlock"]).status, 2, "no slot: the password is asked (no terminal here)")
    }

    func testWithTheKeyringTheTPMUnlockHoldsTheSession() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service")
        let k = try CLIHarness(keyring: true)
        k.env["VAULT_TPM_TCTI"] = tpm.tcti
        try k.initVault()
        try k.ok(["key", "add-tpm"] + k.pw)
        try k.ok(["lock"])
        XCTAssertEqual(try k.run(["ls"]).status, 3, "locked")
        let r = try k.run(["-w", CLIHarness.vaultBinary, "unlock"], program: "/usr/bin/setsid")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.out.contains("This machine's TPM opened the vault"), r.out)
        try k.ok(["ls"])
        try k.ok(["lock"])
    }

    func testAWrongPINCountsAsAFailedUnlockUntilLockoutAndThePasswordStillOpens() throws {
        try h.usePolicy(#"{"maxFailedUnlocks": 20}"#)
        try h.ok(["key", "add-tpm", "--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(try tpmSlots().first?["pin"] as? Bool, true)
        let (right, viaTPM) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(right.status, 0, right.stderr)
        XCTAssertTrue(viaTPM, "the PIN opened it")
        var lockedOut = false
        for attempt in 1...6 where !lockedOut {
            let (r, viaTPM) = try unlock(["--pin-file", try h.wrongPinFile] + h.pw)
            XCTAssertEqual(r.status, 0, "the password opens: \(r.stderr)")
            XCTAssertFalse(viaTPM)
            XCTAssertEqual(r.stderr.split(separator: "\n").filter { $0.contains("TPM") }.count, 1, "one line: \(r.stderr)")
            if r.stderr.contains("locked out") { lockedOut = true; continue }
            XCTAssertTrue(r.stderr.contains("wrong TPM PIN") && r.stderr.contains("left before the TPM locks out"), r.stderr)
            XCTAssertTrue(r.stderr.contains("failed attempt 1 of 20"), "a wrong PIN is a failed unlock (attempt \(attempt)): \(r.stderr)")
        }
        XCTAssertTrue(lockedOut, "swtpm locks out after its maximum of tries")
        // In lockout even the right PIN is not tried; the password opens.
        let (r, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(via)
        XCTAssertTrue(r.stderr.contains("locked out"), r.stderr)
        let noPassword = try h.withoutTerminal(["unlock", "--pin-file", try h.pinFile])
        XCTAssertEqual(noPassword.status, 3, noPassword.stderr)
        XCTAssertTrue(noPassword.stderr.contains("locked out") && noPassword.stderr.contains("--password-file"), noPassword.stderr)
    }

    func testAnExtendedPCRFallsBackToThePasswordWithTheReason() throws {
        try h.ok(["key", "add-tpm", "--pcrs", "16", "--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(try tpmSlots().first?["pcrs"] as? [Int], [16])
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + h.pw).viaTPM)
        try TPM(tcti: tpm.tcti).extendPCR(16, digest: Array(repeating: 0x5a, count: 32))
        let (r, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(via)
        XCTAssertTrue(r.stderr.contains("PCR values changed"), r.stderr)
        XCTAssertEqual(try h.run(["unlock", "--pin-file", try h.pinFile] + (try h.wrongPassword)).status, 3, "nothing else opens it")
    }

    func testTheSlotOfAnotherMachinesTPMIsNamedAndThePasswordOpens() throws {
        try h.ok(["key", "add-tpm", "--pin-file", try h.pinFile] + h.pw)
        let other = try SoftwareTPM()   // another machine: another TPM state
        h.env["VAULT_TPM_TCTI"] = other.tcti
        XCTAssertEqual(try tpmSlots().first?["machine"] as? String, "another machine")
        let (r, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(via)
        XCTAssertTrue(r.stderr.contains("belongs to another machine's TPM"), r.stderr)
        let noTPM = try unlock(["--pin-file", try h.pinFile] + h.pw, tcti: "device:/nonexistent/tpmrm0")
        XCTAssertTrue(noTPM.stderr.contains("no TPM found"), noTPM.stderr)
    }

    func unlock(_ args: [String], tcti: String) throws -> CLIHarness.Result {
        let r = try h.run(["unlock"] + args, env: ["VAULT_TPM_TCTI": tcti])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r
    }

    func testATPMThatIsGoneFallsBackToThePassword() throws {
        try h.ok(["key", "add-tpm"] + h.pw)
        tpm.kill()
        let (r, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(via)
        XCTAssertTrue(r.stderr.contains("the TPM did not answer"), r.stderr)
    }

    /// The TPM cut off in the middle of an unlock, at points spread over the whole exchange (a
    /// relay drops the connection after N bytes): each time the password opens the vault with the
    /// reason named, no PIN try is spent, and the TPM slot opens it again afterwards.
    func testATPMCutOffMidUnlockFallsBackAndLeavesTheSlotWorking() throws {
        try h.ok(["key", "add-tpm", "--pin-file", try h.pinFile] + h.pw)
        let before = try TPM(tcti: tpm.tcti).lockoutState()
        func unlockThrough(_ proxy: CuttingTPMProxy) throws -> (CLIHarness.Result, viaTPM: Bool) {
            let r = try h.run(["unlock", "--json", "--pin-file", try h.pinFile] + h.pw, env: ["VAULT_TPM_TCTI": proxy.tcti])
            return (r, (r.json as? [String: Any])?["unlockedWith"] as? String == "tpm2")
        }
        let whole = try CuttingTPMProxy(tpm, cutAfter: Int(Int32.max))
        let (first, viaWhole) = try unlockThrough(whole)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(viaWhole, "an uncut relay passes the unlock: \(first.stderr)")
        let total = whole.bytes
        XCTAssertGreaterThan(total, 100)
        // A cut in the last flush, after the unseal answered, still opens through the TPM.
        let cuts = Set((1...12).map { total * $0 / 13 } + [1, 10, total - 1])
        var fellBack = 0
        for cut in cuts.sorted() {
            let (r, viaTPM) = try unlockThrough(try CuttingTPMProxy(tpm, cutAfter: cut))
            XCTAssertEqual(r.status, 0, "cut after \(cut) of \(total) bytes: the vault opens: \(r.stderr)")
            if viaTPM { continue }
            fellBack += 1
            XCTAssertEqual(r.stderr.split(separator: "\n").filter { $0.contains("TPM") }.count, 1, "one line names why (cut after \(cut)): \(r.stderr)")
        }
        XCTAssertGreaterThanOrEqual(fellBack, cuts.count - 1, "only a cut in the last flush opens through the TPM")
        XCTAssertEqual(try TPM(tcti: tpm.tcti).lockoutState().failures, before.failures, "a cut call spends no PIN try")
        let (after, via) = try unlock(["--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(after.status, 0, after.stderr)
        XCTAssertTrue(via, "the slot still opens the vault: \(after.stderr)")
        try h.ok(["doctor"] + h.pw)
    }

    /// Every byte of the slot's JSON flipped (the unkeyed checksum fixed, so the slot itself is
    /// what is checked): never unlocked, exit 3 (the TPM refused or the wrap did not open, and the
    /// wrong password then fails) or 6 (refused as damaged).
    func testEveryByteOfTheSlotFlippedIsRefused() throws {
        try h.ok(["key", "add-tpm", "--pcrs", "16"] + h.pw)
        let url = h.home.appendingPathComponent("keyslots")
        let pristine = try Data(contentsOf: url)
        let body = Array(pristine.split(separator: 10, omittingEmptySubsequences: false)[0])
        // The tpm2 slot is the last of `slots` (sorted members: `vaultId` follows, without a "]").
        let end = try XCTUnwrap(body.lastIndex(of: UInt8(ascii: "]")))
        let start = try XCTUnwrap(body[..<end].lastIndex(of: UInt8(ascii: "{")).flatMap { tpm2 in body[..<tpm2].lastIndex(of: UInt8(ascii: "{")) })
        XCTAssertTrue(String(decoding: body[start..<end], as: UTF8.self).hasPrefix(#"{"createdAt""#))
        XCTAssertTrue(String(decoding: body[start..<end], as: UTF8.self).contains(#""type":"tpm2""#))
        let args = ["unlock", "--pin-file", try h.pinFile] + (try h.wrongPassword)
        // Four copies of the vault folder, each flipping every fourth byte, at once.
        let workers = 4
        let homes = try (0..<workers).map { i -> URL in
            let copy = h.root.appendingPathComponent("home-\(i)")
            try FileManager.default.copyItem(at: h.home, to: copy)
            return copy
        }
        let failures = Box<[String]>([])
        let harness: CLIHarness = h
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for offset in stride(from: start + w, to: end, by: workers) {
                var line = body
                line[offset] ^= 0x04
                let file = homes[w].appendingPathComponent("keyslots")
                do {
                    try Data(line + Array("\nsha256:\(sha256Hex(Data(line)))\n".utf8) + Array(pristine.split(separator: 10)[2]) + [10]).write(to: file)
                    let r = try harness.run(args, env: ["VAULT_HOME": homes[w].path])
                    if ![3, 6].contains(r.status) { failures.update { $0.append("byte \(offset - start): exit \(r.status), \(r.stderr)") } }
                } catch {
                    failures.update { $0.append("byte \(offset - start): \(error)") }
                }
            }
        }
        XCTAssertEqual(failures.get(), [], "every flipped byte of the slot is refused")
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + (try h.wrongPassword)).viaTPM, "the pristine slot opens")
    }

    /// `vault key rotate` seals this machine's slot again for the new key (with its PIN), and
    /// drops it with the reason when it cannot.
    func testRotationSealsTheSlotAgainOrDropsItWithTheReason() throws {
        try h.ok(["key", "add-tpm"] + h.pw)
        let before = try XCTUnwrap(try tpmSlots().first)
        let r = try h.withoutTerminal(["key", "rotate"] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.out.contains("Sealed TPM slot \(before["id"]!) again for the new key"), r.out)
        XCTAssertEqual(try tpmSlots().map { $0["id"] as? String }, [before["id"] as? String])
        let u = try h.withoutTerminal(["unlock", "--json"])
        XCTAssertEqual((u.json as? [String: Any])?["unlockedWith"] as? String, "tpm2", "the slot opens the new key: \(u.stderr)")
        // With a PIN: read from --pin-file; without one and no terminal, the slot is dropped.
        try h.ok(["key", "remove", try XCTUnwrap(before["id"] as? String)] + h.pw)
        try h.ok(["key", "add-tpm", "--pin-file", try h.pinFile] + h.pw)
        let withPIN = try h.ok(["key", "rotate", "--json", "--pin-file", try h.pinFile] + h.pw)
        XCTAssertEqual(((withPIN.json as? [String: Any])?["resealedSlots"] as? [String])?.count, 1, withPIN.out)
        XCTAssertTrue(try unlock(["--pin-file", try h.pinFile] + h.pw).viaTPM)
        let noPIN = try h.withoutTerminal(["key", "rotate"] + h.pw)
        XCTAssertEqual(noPIN.status, 0, noPIN.stderr)
        XCTAssertTrue(noPIN.stderr.contains("no TPM PIN") && noPIN.stderr.contains("re-enroll with `vault key add-tpm`"), noPIN.stderr)
        XCTAssertEqual(try tpmSlots().count, 0)
        // Another machine's slot (the vault folder copied): dropped, named.
        try h.ok(["key", "add-tpm"] + h.pw)
        let other = try SoftwareTPM()
        let elsewhere = try h.run(["key", "rotate"] + h.pw, env: ["VAULT_TPM_TCTI": other.tcti])
        XCTAssertEqual(elsewhere.status, 0, elsewhere.stderr)
        XCTAssertTrue(elsewhere.stderr.contains("another machine's TPM"), elsewhere.stderr)
        XCTAssertEqual(try tpmSlots().count, 0)
    }

    /// SECURITY.md and docs/tpm.md are precise enough for another program: scripts/independent-
    /// tpm-slot.py (tpm2-pytss, no vault code) opens the slot with the PIN (in its other Unicode
    /// spelling: NFC) and checks the keyslot MAC; a wrong PIN opens nothing.
    func testAnIndependentProgramOpensTheSlot() throws {
        let python = "/usr/bin/python3"
        try XCTSkipUnless(try h.run(["-c", "import tpm2_pytss, cryptography"], program: python).status == 0,
                          "needs python3-tpm2-pytss and python3-cryptography")
        try h.ok(["key", "add-tpm", "--pcrs", "16", "--pin-file", try h.localFile("composed", Data("caf\u{E9}1\n".utf8))] + h.pw)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/independent-tpm-slot.py").path
        let args = [script, h.home.path, "--tcti", tpm.tcti, "--pin-file"]
        let ok = try h.run(args + [try h.localFile("decomposed", Data("cafe\u{301}1\n".utf8))], program: python)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.out.contains("opens the master key, and the keyslot MAC verifies"), ok.out)
        let wrong = try h.run(args + [try h.wrongPinFile], program: python)
        XCTAssertEqual(wrong.status, 1, wrong.out)
    }

    /// The envelope on the server never holds the tpm2 slot; a change another device makes is
    /// adopted and keeps it.
    func testTheEnvelopeOnTheServerHasNoTPMSlot() throws {
        h.useFastRetry()
        let server = try ServerHarness(root: h.root)
        try h.login(to: server)
        try h.ok(["key", "add-tpm"] + h.pw)
        func envelope() throws -> String { try XCTUnwrap(server.curl("GET", "/v1/keys/envelope").json["envelope"] as? String) }
        XCTAssertFalse(try envelope().contains("tpm2"), "the slot never travels")
        let b = try CLIHarness(keyring: false)
        b.useFastRetry()
        try b.ok(["join", "--server", server.url, "--user", server.user, "--server-password-file", server.passwordFile.path] + b.pw)
        _ = try b.ok(["key", "add-recovery"] + b.pw)
        try h.ok(["sync"] + h.pw)
        let types = try XCTUnwrap(try h.ok(["key", "list", "--json"] + h.pw).json as? [[String: Any]]).compactMap { $0["type"] as? String }
        XCTAssertEqual(types.sorted(), ["password", "recovery", "tpm2"], "adopted B's slot, kept this machine's")
        XCTAssertFalse(try envelope().contains("tpm2"))
        XCTAssertEqual(try h.withoutTerminal(["unlock"]).status, 0, "the TPM slot still opens")
        _ = try h.ok(["key", "add-recovery"] + h.pw)
        XCTAssertFalse(try envelope().contains("tpm2"), "not after this device's next change either")
        // B rotates: the TPM slot here holds the old key; the message says what to do.
        try b.ok(["key", "rotate"] + b.pw)
        let stale = try h.withoutTerminal(["unlock"])
        XCTAssertEqual(stale.status, 3, stale.stderr)
        XCTAssertTrue(stale.stderr.contains("rotated on another device") && stale.stderr.contains("vault unlock --no-tpm"), stale.stderr)
        let caughtUp = try h.ok(["unlock", "--no-tpm"] + h.pw)
        XCTAssertTrue(caughtUp.stderr.contains("now uses epoch 2"), caughtUp.stderr)
        XCTAssertEqual(try tpmSlots().count, 0, "the slot wrapped the old key")
    }
}
