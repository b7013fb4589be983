import Foundation
import VaultTestSupport
import XCTest

/// The protection a user can see (issue 20 item 4), through the binary: `vault status` and
/// `vault init` name the TPM slot or why there is none, and the policy's `requireHardwareKey` and
/// `hardwareKeyPin`. The TPM is swtpm, its own per test.
final class HardwareProtectionTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        h = try CLIHarness(keyring: false)
        h.env["VAULT_POLICY_FILE"] = h.root.appendingPathComponent("policy.json").path
        h.env["VAULT_POLICY_KEY_FILE"] = h.root.appendingPathComponent("no-signing-key.pub").path
    }

    override func tearDown() { h = nil }

    /// `vault init` (text) with `h`'s settings; its stdout.
    func initVault(_ k: CLIHarness) throws -> String {
        try k.ok(["init", "--password-file", k.passwordFile.path, "--kdf-ops", "1", "--kdf-mem", "8M"]).out
    }

    /// `vault status --json`'s protection object and its one-line form.
    func protection(_ k: CLIHarness, _ args: [String] = []) throws -> (fields: [String: Any], summary: String) {
        let json = try XCTUnwrap(try k.ok(["status", "--json"] + args).json as? [String: Any])
        return (try XCTUnwrap(json["protection"] as? [String: Any]), try XCTUnwrap(json["keyProtection"] as? String))
    }

    /// `vault ARGS` in a session of its own: no terminal to ask a PIN or password on.
    func withoutTerminal(_ k: CLIHarness, _ args: [String]) throws -> CLIHarness.Result {
        try k.run(["-w", CLIHarness.vaultBinary] + args, program: "/usr/bin/setsid")
    }

    func swtpm() throws -> SoftwareTPM {
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        return try SoftwareTPM()
    }

    func testWithoutATPMInitAndStatusSaySoftwareOnlyNoTPMFound() throws {
        h.env["VAULT_TPM_TCTI"] = "device:" + h.root.appendingPathComponent("no-such-tpm").path
        let out = try initVault(h)
        XCTAssertTrue(out.contains("No TPM found ("), out)
        XCTAssertTrue(out.contains("the vault is protected by its password only."), out)
        let status = try h.ok(["status"] + h.pw).out
        XCTAssertTrue(status.contains("key     software only: security is reduced (no TPM found"), status)
        let p = try protection(h, h.pw)
        XCTAssertEqual(p.fields["level"] as? String, "software")
        XCTAssertEqual(p.fields["tpmPresent"] as? Bool, false)
        XCTAssertTrue((p.fields["reason"] as? String)?.hasPrefix("no TPM found") == true, "\(p.fields)")
        XCTAssertTrue(p.summary.hasPrefix("software only: security is reduced"), p.summary)
    }

    func testAPresentTPMWithoutASlotIsSoftwareOnlyAndInitSaysHowToAddOne() throws {
        let tpm = try swtpm()
        h.env["VAULT_TPM_TCTI"] = tpm.tcti
        let out = try initVault(h)
        XCTAssertTrue(out.contains("A TPM 2.0 was found: `vault key add-tpm --pin` keeps a hardware-held key"), out)
        let p = try protection(h, h.pw)
        XCTAssertEqual(p.fields["level"] as? String, "software")
        XCTAssertEqual(p.fields["tpmPresent"] as? Bool, true)
        XCTAssertTrue(p.summary.contains("no hardware slot enrolled"), p.summary)
        let json = try XCTUnwrap(try h.ok(["status", "--json"] + h.pw).json as? [String: Any])
        XCTAssertNotNil(json["vaultId"], "the existing fields stay")
    }

    func testASlotOfThisTPMIsHardwareWithOrWithoutAPINAndNothingIsAsked() throws {
        let tpm = try swtpm()
        h.env["VAULT_TPM_TCTI"] = tpm.tcti
        _ = try initVault(h)
        let id = try XCTUnwrap((try h.ok(["key", "add-tpm", "--json"] + h.pw).json as? [String: Any])?["slot"] as? String)
        var p = try protection(h, h.pw)
        XCTAssertEqual(p.summary, "hardware (TPM2)")
        XCTAssertEqual(p.fields["level"] as? String, "hardware")
        XCTAssertEqual(p.fields["slot"] as? String, id)
        XCTAssertEqual(p.fields["pin"] as? Bool, false)
        try h.ok(["key", "remove", id] + h.pw)
        try h.ok(["key", "add-tpm", "--pin-file", try h.localFile("pin", Data("2468\n".utf8))] + h.pw)
        // No terminal: a PIN prompt would fail the command; status asks none.
        let r = try withoutTerminal(h, ["status"] + h.pw)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.out.contains("key     hardware (TPM2, PIN)"), r.out)
        p = try protection(h, h.pw)
        XCTAssertEqual(p.fields["pin"] as? Bool, true)
    }

    func testASlotOfAnotherMachinesTPMIsSoftwareOnly() throws {
        let mine = try swtpm(), other = try SoftwareTPM()
        h.env["VAULT_TPM_TCTI"] = other.tcti
        _ = try initVault(h)
        try h.ok(["key", "add-tpm"] + h.pw)
        h.env["VAULT_TPM_TCTI"] = mine.tcti
        let p = try protection(h, h.pw)
        XCTAssertEqual(p.fields["level"] as? String, "software")
        XCTAssertTrue(p.summary.contains("the TPM slot belongs to another machine"), p.summary)
    }

    func testRequireHardwareKeyRefusesThePasswordAndAllowsTheTPMAndTheRecoveryKey() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service")
        let tpm = try swtpm()
        let k = try CLIHarness(keyring: true)
        let policy = k.root.appendingPathComponent("policy.json")
        k.env["VAULT_POLICY_FILE"] = policy.path
        k.env["VAULT_POLICY_KEY_FILE"] = k.root.appendingPathComponent("no-signing-key.pub").path
        k.env["VAULT_TPM_TCTI"] = tpm.tcti
        _ = try initVault(k)
        let recovery = try XCTUnwrap((try k.ok(["key", "add-recovery", "--json"] + k.pw).json as? [String: String])?["recoveryKey"])
        try k.ok(["unlock"] + k.pw)
        try Data(#"{"requireHardwareKey": true}"#.utf8).write(to: policy)
        let unmet = try k.run(["policy", "check"])
        XCTAssertEqual(unmet.status, 11, unmet.stderr)
        XCTAssertTrue(unmet.out.contains("FAIL hardware key: the policy requires a hardware slot: no hardware slot enrolled"), unmet.out)
        XCTAssertTrue(unmet.out.contains("fix: vault key add-tpm"), unmet.out)
        try k.ok(["key", "add-tpm"])
        try k.ok(["lock"])
        for args in [["unlock", "--no-tpm"] + k.pw, ["unlock"] + k.pw, ["ls"] + k.pw] {
            let r = try k.run(args)
            XCTAssertEqual(r.status, 11, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("requireHardwareKey"), r.stderr)
        }
        let viaTPM = try withoutTerminal(k, ["unlock", "--json"])
        XCTAssertEqual(viaTPM.status, 0, viaTPM.stderr)
        XCTAssertEqual((viaTPM.json as? [String: Any])?["unlockedWith"] as? String, "tpm2")
        let check = try k.ok(["policy", "check"]).out
        XCTAssertTrue(check.contains("ok   hardware key: unlocks go through this machine's TPM (hardware (TPM2))"), check)
        try k.ok(["lock"])
        try k.ok(["unlock", "--recovery-key-file", try k.localFile("rk", Data((recovery + "\n").utf8))])
        try k.ok(["lock"])
    }

    func testHardwareKeyPinRefusesAddTPMWithoutAPINAndPolicyCheckListsBoth() throws {
        let tpm = try swtpm()
        h.env["VAULT_TPM_TCTI"] = tpm.tcti
        _ = try initVault(h)
        try Data(#"{"hardwareKeyPin": true}"#.utf8).write(to: h.root.appendingPathComponent("policy.json"))
        let r = try h.run(["key", "add-tpm"] + h.pw)
        XCTAssertEqual(r.status, 11, r.stderr)
        XCTAssertTrue(r.stderr.contains("hardwareKeyPin"), r.stderr)
        XCTAssertEqual(try h.run(["policy", "check"] + h.pw).status, 0, "no TPM slot: nothing without a PIN")
        try h.ok(["key", "add-tpm", "--pin-file", try h.localFile("pin", Data("2468\n".utf8))] + h.pw)
        let check = try h.ok(["policy", "check"] + h.pw).out
        XCTAssertTrue(check.contains("ok   hardware key PIN: every TPM slot has a PIN"), check)
    }
}
