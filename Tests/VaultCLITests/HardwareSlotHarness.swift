import Foundation
import XCTest

/// What the hardware-slot tests (TPMSlotTests, FIDO2SlotTests, HardwareProtectionTests) share:
/// PIN files, a wrong password, a run with no terminal, the slots of one type, and what opened
/// the vault.
extension CLIHarness {
    /// A PIN file (2468), a wrong PIN file (1357) and the arguments of a wrong password.
    var pinFile: String { get throws { try localFile("pin", Data("2468\n".utf8)) } }
    var wrongPinFile: String { get throws { try localFile("wrong-pin", Data("1357\n".utf8)) } }
    var wrongPassword: [String] { get throws { ["--password-file", try localFile("wrong-pw", Data("not the password\n".utf8))] } }

    /// `vault ARGS` in a session of its own: no terminal to ask on, whatever runs the tests.
    func withoutTerminal(_ args: [String]) throws -> Result {
        try run(["-w", CLIHarness.vaultBinary] + args, program: "/usr/bin/setsid")
    }

    /// `vault unlock --json ARGS`, and the slot type that opened the vault (`unlockedWith`; nil:
    /// the password or recovery key).
    func unlockedWith(_ args: [String]) throws -> (Result, String?) {
        let r = try run(["unlock", "--json"] + args)
        return (r, (r.json as? [String: Any])?["unlockedWith"] as? String)
    }

    /// `vault key list --json`, the slots of `type`.
    func slots(ofType type: String) throws -> [[String: Any]] {
        try XCTUnwrap(try ok(["key", "list", "--json"] + pw).json as? [[String: Any]]).filter { $0["type"] as? String == type }
    }
}
