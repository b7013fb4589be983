import Foundation
import XCTest
import VaultAgent
import VaultCore

/// The agent's unit that scripts/install.sh installs says what the unit `vault agent install`
/// writes (SystemdUnit), but for the default vault: the same [Service] and [Install] lines; and
/// the script installs `vault-agent` beside `vault`.
final class AgentUnitTests: XCTestCase {
    func testInstalledUnitKeepsTheAgentsServiceLines() throws {
        let script = try String(contentsOf: GeneratedFilesTests.root.appendingPathComponent("scripts/install.sh"), encoding: .utf8)
        let start = try XCTUnwrap(script.range(of: "<<UNIT\n")), end = try XCTUnwrap(script.range(of: "\nUNIT\n"))
        let installed = Set(script[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init))
        let unit = SystemdUnit(vaultId: "0123456789abcdef0123456789abcdef", layout: VaultLayout(root: "/home/u/.local/share/vault"),
                               environment: [:], executable: "/usr/local/bin/vault")
        var section = ""
        for line in unit.text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("[") { section = line }
            guard ["[Service]", "[Install]"].contains(section), !line.hasPrefix("ExecStart="), !line.hasPrefix("Environment=") else { continue }
            XCTAssertTrue(installed.contains(line), "scripts/install.sh's unit lacks `\(line)`")
        }
        XCTAssertTrue(installed.contains(#"ExecStart="$PREFIX/bin/vault" agent"#))
        // `vault agent` becomes the vault-agent beside it: the two are installed together.
        XCTAssertTrue(script.contains(#"for product in vault vault-agent vault-server; do"#))
        XCTAssertTrue(script.contains(#"install -D -m 0755 "$bin/vault-agent" "$DEST/bin/vault-agent""#))
    }
}
