import Foundation
import VaultTestSupport
import XCTest

/// Issue 20 item 2: where this machine's TPM holds one of the vault's tpm2 slots, the keyring item
/// holds the master key only wrapped under a session key the TPM sealed (`v3`), so a copy of the
/// item taken off the machine, or read while the TPM is gone, opens nothing. Through the `vault`
/// binary, against a real keyring and a real TPM 2.0 (swtpm).
final class TPMKeyringSessionTests: XCTestCase {
    var h: CLIHarness!
    var tpm: SoftwareTPM!

    override func setUpWithError() throws {
        try XCTSkipUnless(SoftwareTPM.available, "needs swtpm (scripts/install-deps.sh installs it)")
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service")
        tpm = try SoftwareTPM()
        h = try CLIHarness(keyring: true)
        h.env["VAULT_TPM_TCTI"] = tpm.tcti
        try h.initVault()
    }

    override func tearDown() { h = nil; tpm = nil }

    func item() throws -> String { try XCTUnwrap(try h.keyringItem(try h.vaultId()), "the vault is unlocked").trimmingCharacters(in: .newlines) }

    func testTheItemOpensOnlyUnderThisMachinesTPM() throws {
        let id = try h.vaultId()
        try h.ok(["unlock"] + h.pw)
        let direct = try item()
        XCTAssertTrue(direct.hasPrefix("v1:"), "no hardware slot yet: the key itself")
        let masterKeyHex = try XCTUnwrap(direct.split(separator: ":").last.map(String.init))
        XCTAssertEqual(masterKeyHex.count, 64)

        try h.ok(["key", "add-tpm"] + h.pw)
        try h.ok(["unlock"] + h.pw)
        let wrapped = try item()
        XCTAssertTrue(wrapped.hasPrefix("v3:"), wrapped)
        XCTAssertFalse(wrapped.contains(masterKeyHex), "the master key is not in the item")
        XCTAssertEqual(wrapped.split(separator: ":", omittingEmptySubsequences: false).count, 10)
        try h.ok(["ls"])
        XCTAssertTrue(try item().hasPrefix("v3:"), "a command that refreshes the idle clock keeps the item wrapped")

        // Another machine (another TPM) with a copy of the item: it opens nothing there, says
        // why, and the item is removed.
        let other = try SoftwareTPM()
        let elsewhere = try h.run(["ls"], env: ["VAULT_TPM_TCTI": other.tcti])
        XCTAssertEqual(elsewhere.status, 3, elsewhere.stderr)
        XCTAssertTrue(elsewhere.stderr.contains("does not open under this machine's TPM"), elsewhere.stderr)
        XCTAssertNil(try h.keyringItem(id))

        // The copy put back on this machine opens again.
        try h.storeKeyringItem(id, wrapped)
        try h.ok(["ls"])

        // This TPM gone: locked, with the reason; the item is kept, and a password still opens
        // the vault for one command. The TPM back: the session goes on.
        tpm.kill()
        let gone = try h.run(["ls"])
        XCTAssertEqual(gone.status, 3, gone.stderr)
        XCTAssertTrue(gone.stderr.contains("held under this machine's TPM, which cannot be used now"), gone.stderr)
        XCTAssertNotNil(try h.keyringItem(id))
        let withPassword = try h.run(["ls"] + h.pw)
        XCTAssertEqual(withPassword.status, 0, withPassword.stderr)
        let back = try SoftwareTPM(state: tpm.stateDir)
        h.env["VAULT_TPM_TCTI"] = back.tcti
        try h.ok(["ls"])

        // An altered item (one hex digit of the sealed key, or a deadline) opens nothing and is removed.
        for field in [9, 4] {
            var fields = try item().split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            fields[field] = field == 4 ? String(Int(fields[4])! + 3600) : String(fields[9].first == "0" ? "1" : "0") + fields[9].dropFirst()
            try h.storeKeyringItem(id, fields.joined(separator: ":"))
            let altered = try h.run(["ls"])
            XCTAssertEqual(altered.status, 3, altered.stderr)
            XCTAssertTrue(altered.stderr.contains("was altered"), altered.stderr)
            XCTAssertNil(try h.keyringItem(id))
            try h.ok(["unlock"] + h.pw)
        }

        // `vault lock` removes it as any item.
        try h.ok(["lock"])
        XCTAssertNil(try h.keyringItem(id))
        XCTAssertEqual(try h.run(["ls"]).status, 3)
    }

    /// An agent that starts while a `v3` item exists takes the session over (through this TPM)
    /// and rewrites the item as `v2`, as it does with `v1`.
    func testAnAgentTakesATPMWrappedSessionOver() throws {
        let id = try h.vaultId()
        try h.ok(["key", "add-tpm"] + h.pw)
        try h.ok(["unlock"] + h.pw)
        XCTAssertTrue(try item().hasPrefix("v3:"))
        try AgentProcess.prepare(h)
        let agent = try AgentProcess(h)
        XCTAssertTrue(try waitFor(30) { try self.item().hasPrefix("v2:") } != nil, agent.log)
        XCTAssertTrue(agent.log.contains("took over the session"), agent.log)
        try h.ok(["ls"])
        // `vault lock` removes it as any item.
        try h.ok(["lock"])
        XCTAssertNil(try h.keyringItem(id))
        XCTAssertEqual(try h.run(["ls"]).status, 3)
    }
}
