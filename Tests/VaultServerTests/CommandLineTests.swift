import Foundation
import XCTest

/// `vault-server` on the shared parser, through the binary: unknown and misplaced options are a
/// usage error (exit 2) and nothing starts; help and version answer on standard output.
final class CommandLineTests: XCTestCase {
    func testUnknownAndMisplacedOptionsAreRefusedBeforeAnythingStarts() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("srv-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        for args in [["--anything"], ["serve", "--data", data, "--max-conections", "5"], ["serve", "--data", data, "--threads", "-1"],
                     ["user", "add", "bob", "--data", data, "--quiet"], ["serve"], ["serve", "--data", data, "stray"], ["serve", "--data", data, "--quota", "1", "--quota", "2"]] {
            XCTAssertEqual(try ServerProcess.run(args).0, 2, "\(args)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: data), "nothing was created")
        let (code, help) = try ServerProcess.run(["serve", "--help"])
        XCTAssertEqual(code, 0)
        XCTAssertTrue(help.contains("--max-connections-per-ip <n>"), help)
        XCTAssertEqual(try ServerProcess.run(["--version"]).1, "vault-server 0.1.0\n")
        XCTAssertTrue(try ServerProcess.run(["help", "--man"]).1.hasPrefix(".\\\" Generated from the command definitions"))
    }
}
