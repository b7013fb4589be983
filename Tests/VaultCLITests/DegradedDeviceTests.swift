import Foundation
import XCTest

/// A device without memory locking or without a keyring: the vault works, says plainly what
/// protection is lost, and refuses when the policy requires the missing protection.
final class DegradedDeviceTests: XCTestCase {
    /// Runs vault without CAP_IPC_LOCK and with RLIMIT_MEMLOCK 0, so mlock fails.
    func runWithoutMlock(_ h: CLIHarness, _ args: [String]) throws -> (Int32, String) {
        let quoted = args.map { "'\($0)'" }.joined(separator: " ")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", "ulimit -l 0; exec setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock '\(CLIHarness.vaultBinary)' \(quoted)"]
        p.environment = h.env
        let out = Pipe()
        p.standardOutput = out; p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testNoMemoryLockingIsSaidAndPolicyRefuses() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/bin/setpriv"), "needs setpriv (util-linux)")
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let (st, out) = try runWithoutMlock(h, ["status"] + h.pw)
        XCTAssertEqual(st, 0, out)
        XCTAssertTrue(out.contains("memory locking is unavailable"), out)
        XCTAssertTrue(out.contains("no keyring"), out)
        try h.usePolicy(#"{"memoryLockRequired": true}"#)
        let (st2, out2) = try runWithoutMlock(h, ["ls"] + h.pw)
        XCTAssertEqual(st2, 11, out2)
        XCTAssertTrue(out2.contains("requires locked memory"), out2)
        try h.ok(["ls"] + h.pw)     // with mlock available (root here) the same policy is satisfied
    }
}
