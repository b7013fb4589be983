import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Standard output that goes away: a reader that closed its end (`vault transfers | head -1`)
/// ends the output quietly and the command exits with its own status; a stdout that cannot be
/// written (`> /dev/full`) makes it exit 1 saying so. Never a crash.
final class OutputTests: XCTestCase {
    /// Runs `vault args` with standard output on a pipe nobody reads (its read end closed before
    /// the command starts, so the first write meets EPIPE).
    func runIntoClosedPipe(_ h: CLIHarness, _ args: [String]) throws -> (Process.TerminationReason, Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        p.arguments = args
        p.environment = h.env
        let out = Pipe(), err = Pipe()
        try out.fileHandleForReading.close()
        p.standardOutput = out.fileHandleForWriting
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        try out.fileHandleForWriting.close()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationReason, p.terminationStatus, String(decoding: e, as: UTF8.self))
    }

    func testEveryListingSurvivesAReaderThatWentAway() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        let server = try ServerHarness(root: h.root)
        try h.login(to: server)
        for i in 0..<5 { try h.ok(["put", try h.localFile("f\(i)", Data(repeating: UInt8(i), count: 1000)), "/f\(i)"] + h.pw) }
        try h.ok(["mkdir", "-p", "/a/b/c"] + h.pw)
        try h.ok(["sync"] + h.pw)
        try h.usePolicy(#"{"idleTimeoutMax": 600}"#)
        // Commands that open the vault take --password-file; the others refuse it (exit 2).
        let commands: [[String]] = [
            ["transfers"], ["transfers", "--json"], ["policy", "check"], ["ls"], ["ls", "-l"], ["ls", "--json"],
            ["tree"], ["tree", "--json"], ["status"], ["storage"], ["key", "list"], ["doctor"],
        ].map { $0 + h.pw } + [
            ["policy", "show"], ["policy", "show", "--json"], ["backup-exclusion", "status"], ["backup-exclusion", "status", "--json"],
            ["help"], ["help", "--man"], ["put", "--help"], ["version"], ["completion", "bash"],
        ]
        XCTAssertGreaterThan(try h.ok(["transfers"] + h.pw).out.split(separator: "\n").count, 1)
        for args in commands {
            let (reason, status, stderr) = try runIntoClosedPipe(h, args)
            XCTAssertEqual(reason, .exit, "\(args) crashed on the closed pipe: \(stderr)")
            XCTAssertEqual(status, 0, "\(args): \(stderr)")
            XCTAssertFalse(stderr.contains("Fatal error"), "\(args): \(stderr)")
        }
        // An error report into a closed pipe: still its own exit code.
        let (reason, status, _) = try runIntoClosedPipe(h, ["get", "/missing", h.root.appendingPathComponent("out").path, "--json"] + h.pw)
        XCTAssertEqual(reason, .exit)
        XCTAssertEqual(status, 4)
    }

    func testStandardOutputThatCannotBeWrittenIsAnError() throws {
        let h = try CLIHarness(keyring: false)
        try h.initVault()
        try h.ok(["mkdir", "/x"] + h.pw)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.vaultBinary)
        p.arguments = ["ls"] + h.pw
        p.environment = h.env
        let full = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
        let err = Pipe()
        p.standardOutput = full
        p.standardError = err
        try p.run()
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit, e)
        XCTAssertEqual(p.terminationStatus, 1, e)
        XCTAssertTrue(e.contains("cannot write to standard output: No space left on device"), e)
    }
}
