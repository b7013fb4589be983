import Foundation
import XCTest
import VaultArguments
@testable import VaultCLI
@testable import VaultServer

/// The man pages and shell completions in the repository are what the command definitions make
/// today: a change to a command that is not regenerated (scripts/generate-docs.sh) fails here.
final class GeneratedFilesTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let files: [(String, @Sendable () -> String)] = [
        ("docs/vault.1", { ManualGenerator.page(VaultProgram.self, section: 1) }),
        ("docs/vault-server.8", { ManualGenerator.page(VaultServerProgram.self, section: 8, title: "System Administration") }),
        ("completions/vault.bash", { CompletionGenerator.script(VaultProgram.self, shell: .bash) }),
        ("completions/_vault", { CompletionGenerator.script(VaultProgram.self, shell: .zsh) }),
        ("completions/vault.fish", { CompletionGenerator.script(VaultProgram.self, shell: .fish) }),
    ]

    func testCommittedFilesMatchTheDefinitions() throws {
        for (path, make) in Self.files {
            let committed = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            XCTAssertTrue(committed == make(), "\(path) differs from what the command definitions make: run scripts/generate-docs.sh")
        }
    }

    /// `man ./docs/vault.1` renders without warnings and has the sections a manual page needs.
    func testManualPagesRender() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { throw XCTSkip("groff is not installed") }
        for (page, sections) in [("docs/vault.1", ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "ENVIRONMENT", "FILES", "EXIT STATUS", "SEE ALSO"]),
                                 ("docs/vault-server.8", ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "FILES", "EXIT STATUS", "SEE ALSO"])] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/groff")
            p.arguments = ["-man", "-Tutf8", "-ww", "-z", Self.root.appendingPathComponent(page).path]
            let err = Pipe()
            p.standardError = err
            try p.run()
            let warnings = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0)
            XCTAssertEqual(warnings, "", "\(page): groff warns")
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            for s in sections { XCTAssertTrue(text.contains("\n.SH \(s)\n"), "\(page) lacks \(s)") }
        }
    }

    /// scripts/test-completions.sh: the bash completion answers as bash would on <Tab>; the zsh
    /// and fish files parse.
    func testCompletionScripts() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [Self.root.appendingPathComponent("scripts/test-completions.sh").path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, text)
    }
}
