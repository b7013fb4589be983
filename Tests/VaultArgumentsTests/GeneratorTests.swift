import XCTest
@testable import VaultArguments

/// Help, usage, the manual page and the completion scripts, as the fixture tree makes them.
final class GeneratorTests: XCTestCase {
    func testHelpSnapshot() {
        XCTAssertEqual(HelpGenerator.help(CommandPath([Tool.self, Copy.self])), """
        OVERVIEW: Copy a thing.

          Copies SOURCE to DEST.

        USAGE: tool copy [<options>] <source> [<dest>]

        ARGUMENTS:
          <source>                What to copy.
          <dest>                  Where to.

        OPTIONS:
          -r, --recursive         Copy folders too.
          -f, --force             Overwrite.
          --concurrency <n>       Parallel copies (1 to 8). (default: 4)
          --label <value>         A label.
          -x, --exclude <pattern>
                                  Leave out names matching this (repeatable).
          --colour <value>        The colour. (values: red, green)
          --wait-time <seconds>   Seconds to wait.
          --json                  Print JSON.
          -h, --help              Show help information.

        """)
    }

    func testGroupHelpSnapshot() {
        XCTAssertEqual(HelpGenerator.help(CommandPath([Tool.self, Queue.self])), """
        OVERVIEW: The queue.

        USAGE: tool queue [<subcommand>]

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          list (default)          List the queue.
          drop                    Drop an entry.

          See 'tool help queue <subcommand>' for detailed help.

        """)
    }

    func testRootHelpHasCommandsAndSections() {
        let text = HelpGenerator.help(CommandPath([Tool.self]))
        XCTAssertTrue(text.contains("USAGE: tool <command>"), text)
        XCTAssertTrue(text.contains("  --version               Show the version."), text)
        XCTAssertTrue(text.contains("COMMANDS:\n  copy                    Copy a thing."), text)
        XCTAssertTrue(text.contains("EXIT STATUS:\n  0                       Success."), text)
    }

    func testUsageCollapsesLongOptionLists() {
        XCTAssertEqual(HelpGenerator.usage(CommandPath([Tool.self, Remote.self, Remote.Add.self])), "tool remote add --url <url> <name>")
        XCTAssertEqual(HelpGenerator.usage(CommandPath([Tool.self, Remote.self, Remote.Remove.self])), "tool remote remove [--json] [<name> ...]")
        XCTAssertEqual(HelpGenerator.usage(CommandPath([Tool.self, Copy.self])), "tool copy [<options>] <source> [<dest>]")
    }

    func testManualPage() {
        let page = ManualGenerator.page(Tool.self, section: 1)
        for part in [".TH TOOL 1 \"\" \"tool 1.2.3\" \"User Commands\"", ".SH NAME\ntool \\- a tool to test the parser with",
                     ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SS \"copy\"", ".SS \"remote add\"",
                     "\\fB\\-r\\fR, \\fB\\-\\-recursive\\fR\nCopy folders too.", "\\fB\\-\\-url\\fR \\fIurl\\fR",
                     ".SH EXIT STATUS\n.TP\n.B 0\nSuccess.", "\\fB\\-\\-version\\fR"] {
            XCTAssertTrue(page.contains(part), "missing \(part)")
        }
        XCTAssertFalse(page.contains("\n-"), "no line starts with a bare dash")
        XCTAssertEqual(page, ManualGenerator.page(Tool.self, section: 1), "the same every time (no date)")
    }

    func testCompletionScriptsNameEveryCommandAndOption() {
        for shell in CompletionShell.allCases {
            let script = CompletionGenerator.script(Tool.self, shell: shell)
            for word in ["copy", "remote", "add", "remove", "queue", "drop", "--concurrency", "--exclude", "--url", "--limit", "red green"] {
                XCTAssertTrue(script.contains(word), "\(shell) lacks \(word)")
            }
        }
        XCTAssertTrue(CompletionGenerator.script(Tool.self, shell: .bash).contains("complete -F _tool tool"))
        XCTAssertTrue(CompletionGenerator.script(Tool.self, shell: .zsh).hasPrefix("#compdef tool\n"))
        XCTAssertTrue(CompletionGenerator.script(Tool.self, shell: .fish).contains("complete -c tool -n '__fish_tool_using tool' -a 'copy'"))
    }
}
