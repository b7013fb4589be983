import Foundation
import XCTest
import VaultTestSupport

/// `vault-agent` holds keys and never opens the metadata database: it is built on VaultKeys, not
/// VaultCore, and links no SQLCipher (no `sqlite3_` symbol, no libsqlcipher it needs).
final class AgentLinkageTests: XCTestCase {
    func testVaultAgentLinksNoSQLCipher() throws {
        guard let agent = BuiltProducts.executable("vault-agent") else {
            throw XCTSkip("vault-agent is not built in \(BuiltProducts.directory.path) (run `swift build --build-tests`)")
        }
        // The symbol table (what was linked in statically) and the dynamic one (what it calls in
        // shared libraries): neither names SQLite.
        let symbols = try Self.output("/usr/bin/nm", [agent]) + Self.output("/usr/bin/nm", ["-D", agent])
        let sqlite = symbols.split(separator: "\n").filter { $0.contains("sqlite3_") }
        XCTAssertTrue(sqlite.isEmpty, "vault-agent has SQLite symbols: \(sqlite.prefix(5).joined(separator: "; "))")
        let dynamic = try Self.output("/usr/bin/readelf", ["-d", agent])
        XCTAssertTrue(dynamic.contains("(NEEDED)"), "readelf -d lists no needed library: \(dynamic)")
        XCTAssertFalse(dynamic.contains("libsqlcipher"), "vault-agent needs libsqlcipher:\n\(dynamic)")
        XCTAssertFalse(dynamic.contains("libsqlite3"), "vault-agent needs libsqlite3:\n\(dynamic)")
    }

    /// The standard output of `tool arguments` (which must succeed).
    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw XCTSkip("\(tool) is not installed (binutils)") }
        let r = try toolOutput(tool, arguments)
        XCTAssertEqual(r.status, 0, "\(tool) \(arguments.joined(separator: " ")) failed")
        return r.output
    }
}
