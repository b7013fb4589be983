import XCTest
import VaultArguments
@testable import VaultCLI
@testable import VaultServer

/// The real command trees of `vault` and `vault-server`: every command has help, every option
/// belongs to the commands that use it, and the usage errors name them.
final class CommandTreeTests: XCTestCase {
    let vault = CommandParser(VaultProgram.self)
    let server = CommandParser(VaultServerProgram.self)

    func testHelpOnEveryCommandAndSubcommand() throws {
        for parser in [vault, server] {
            for path in parser.root.allVisible {
                let words = Array(path.names.dropFirst())
                for help in [["--help"], ["-h"]] {
                    guard case .help(let got) = try parser.parse(words + help) else { return XCTFail("\(path): \(help) is not help") }
                    XCTAssertEqual(got.displayName, path.displayName)
                }
                let text = HelpGenerator.help(path)
                XCTAssertTrue(text.hasPrefix("OVERVIEW: "), "\(path)")
                XCTAssertTrue(text.contains("USAGE: \(path.displayName)"), "\(path)")
                XCTAssertTrue(text.contains("-h, --help"), "\(path)")
                for d in path.definitions where !d.isHidden {
                    XCTAssertFalse(d.help.isEmpty, "\(path) \(d.displayName) has no help text")
                    XCTAssertTrue(text.contains(d.helpNames), "\(path) help lacks \(d.helpNames)")
                }
                XCTAssertFalse(path.leaf.configuration.abstract.isEmpty, "\(path) has no abstract")
                if !path.leaf.configuration.subcommands.isEmpty {
                    XCTAssertTrue(path.definitions.isEmpty, "\(path) groups subcommands, so it declares nothing of its own")
                }
            }
        }
        // `vault help key passwd` names the same help.
        guard case .run(let c, _) = try vault.parse(["help", "key", "passwd"]), let h = c as? HelpCommand else { return XCTFail() }
        XCTAssertEqual(h.command, ["key", "passwd"])
    }

    /// Every leaf command runs (a `VaultCommand`), and the runner sees its `--json` and
    /// `--password-file` (errors as JSON, the password source) exactly when it declares them.
    func testEveryVaultCommandRunsAndShowsItsCommonOptionsToTheRunner() {
        for path in vault.root.allVisible where path.leaf.configuration.subcommands.isEmpty {
            XCTAssertTrue(path.leaf is any VaultCommand.Type, "\(path) does not run")
            let names = Set(path.definitions.compactMap(\.longName))
            XCTAssertEqual(names.contains("json"), path.leaf is any ProducesJSON.Type, "\(path): --json and ProducesJSON go together")
            XCTAssertEqual(names.contains("password-file"), path.leaf is any ReadsPassword.Type, "\(path): --password-file and ReadsPassword go together")
        }
    }

    /// The options the issue found accepted silently, and their neighbours: each is a usage error
    /// that names where the option belongs.
    func testMisplacedOptionsAreUsageErrors() {
        func owners(_ args: [String]) -> [String]? {
            do { _ = try vault.parse(args); return nil } catch {
                guard case .unknownOption(_, let owners) = error.kind else { return nil }
                return owners
            }
        }
        XCTAssertEqual(owners(["key", "list", "--kdf-time", "3"]),
                       ["vault init", "vault key passwd", "vault key calibrate", "vault admin recover", "vault backup import"])
        XCTAssertEqual(owners(["lock", "--password-file", "f"])?.contains("vault unlock"), true)
        XCTAssertEqual(owners(["policy", "show", "--password-file", "f"])?.contains("vault policy check"), true)
        XCTAssertEqual(owners(["transfers", "pause", "/a", "--metered", "yes"]), ["vault transfers list", "vault transfers resume"])
        XCTAssertEqual(owners(["ls", "--recursive"]), ["vault put", "vault rm"])
        XCTAssertEqual(owners(["cat", "/a", "--json"])?.contains("vault get"), true)
        XCTAssertEqual(owners(["backup", "export", "f", "--new-password-file", "p"]),
                       ["vault key passwd", "vault admin recover", "vault backup import"])
        XCTAssertEqual(owners(["sync", "--org-key", "k"]), ["vault init", "vault key add-escrow", "vault admin recover"])
        for args in [["key", "list", "--kdf-time", "3"], ["status", "--wait"], ["init", "--all"], ["mkdir", "-r", "/a"]] {
            XCTAssertThrowsError(try vault.parse(args), "\(args)")
        }
        do { _ = try server.parse(["--anything"]); XCTFail("accepted") } catch {
            XCTAssertEqual(error.kind, .unknownOption("--anything", belongsTo: []))
        }
        do { _ = try server.parse(["user", "add", "bob", "--data", "/d", "--quiet"]); XCTFail("accepted") } catch {
            XCTAssertEqual(error.kind, .unknownOption("--quiet", belongsTo: ["vault-server serve"]))
        }
    }

    func testTypedValuesAreCheckedWhereTheyAreParsed() {
        func message(_ args: [String]) -> String? {
            do { _ = try vault.parse(args); return nil } catch { return error.message }
        }
        XCTAssertEqual(message(["unlock", "--idle", "5x"]), "--idle: '5x' is not a duration like 15m, 8h or 0 (never)")
        XCTAssertEqual(message(["storage", "--budget", "lots"]), "--budget: 'lots' is not a size like 10G or 512M, or none")
        XCTAssertEqual(message(["init", "--kdf", "scrypt"]), "--kdf: 'scrypt' is not one of argon2id or pbkdf2")
        XCTAssertEqual(message(["sync", "--concurrency", "17"]), "--concurrency takes a number from 1 to 16")
        XCTAssertEqual(message(["init", "--kdf-time", "61"]), "--kdf-time must be seconds between 0 and 60")
        XCTAssertEqual(message(["transfers", "--metered", "maybe"]), "--metered: 'maybe' is not one of yes, no or auto")
        XCTAssertEqual(message(["completion", "tcsh"]), "<shell>: 'tcsh' is not one of bash, zsh or fish")
        XCTAssertEqual(message(["backup", "import", "f", "--kdf-ops", "1"]),
                       "the --kdf options set the cost of a new password slot: give --new-password-file too")
    }

    /// The commands of two-way sync and end-to-end encryption on the typed parser: their
    /// options parse into typed values, and combinations that cannot work are usage errors.
    func testSyncAndEndToEndCommandsParseTypedValues() throws {
        func parsed<T>(_ args: [String], as: T.Type) throws -> T {
            guard case .run(let c, _) = try vault.parse(args), let t = c as? T else { throw NotThatCommand(args: args) }
            return t
        }
        func message(_ args: [String]) -> String? {
            do { _ = try vault.parse(args); return nil } catch { return error.message }
        }
        let sync = try parsed(["sync", "--max-delete", "5", "--force"], as: SyncCommand.self)
        XCTAssertEqual(sync.request.maxDelete, 5)
        XCTAssertTrue(sync.request.force)
        XCTAssertEqual(try parsed(["sync"], as: SyncCommand.self).request.maxDelete, 1000, "the pull's default guard")
        XCTAssertEqual(message(["sync", "--max-delete", "lots"]), "--max-delete: 'lots' is not a whole number")
        XCTAssertEqual(message(["sync", "--max-delete", "-1"]), "--max-delete takes a number of items (0 or more)")
        XCTAssertEqual(message(["sync", "--watch", "--json"]), "--watch runs until it is stopped and has no single result: leave out --json")
        XCTAssertEqual(try parsed(["cat", "--revision", "r1", "/a"], as: CatCommand.self).revision, "r1")
        XCTAssertEqual(try parsed(["get", "/a", "out", "--revision=r2", "-f"], as: GetCommand.self).revision, "r2")
        XCTAssertEqual(try parsed(["restore", "/a", "--revision", "r3"], as: RestoreCommand.self).revision, "r3")
        XCTAssertNotNil(message(["restore", "/a"]), "--revision is required")
        XCTAssertEqual(try parsed(["config"], as: ConfigCommand.List.self).output.json, false, "config alone lists")
        XCTAssertEqual(try parsed(["config", "get", "device-name"], as: ConfigCommand.Get.self).key, .deviceName)
        XCTAssertEqual(message(["config", "get", "colour"]), "<key>: 'colour' is not one of conflicts or device-name")
        XCTAssertEqual(message(["config", "set", "conflicts", "newest"]), "conflicts takes keep-both or last-writer-wins")
        XCTAssertEqual(message(["config", "set", "device-name", "a/b"]), "device-name takes 1 to 64 characters, no '/' or control characters")
        XCTAssertNil(message(["config", "set", "device-name", "laptop a"]))
        let join = try parsed(["join", "--server", "https://h", "--user", "u", "--recovery-key-file", "k"], as: JoinCommand.self)
        XCTAssertEqual(join.account.user, "u")
        XCTAssertEqual(join.recoveryKeyFile, "k")
        XCTAssertNotNil(message(["join", "--server", "https://h", "--user", "u", "--recovery-key-file", "k", "--password-file", "p"]))
        XCTAssertNotNil(message(["join", "--server", "https://h"]), "--user is required")
        XCTAssertEqual(try parsed(["agent", "work", "--parent", "1", "--max-delete", "3", "--force"], as: AgentCommand.Work.self).maxDelete, 3)
    }

    struct NotThatCommand: Error { var args: [String] }

    func testHelpSnapshot() {
        XCTAssertEqual(HelpGenerator.help(vault.root.descendant(["key", "calibrate"])!), """
        OVERVIEW: Measure what the KDF costs here (--apply: use them for the password
          slot).

        USAGE: vault key calibrate [<options>]

        OPTIONS:
          --kdf <kdf>             Key derivation function for the password slot
                                  (default: argon2id, or pbkdf2 under a pbkdf2Only
                                  policy). (values: argon2id, pbkdf2)
          --kdf-time <seconds>    Calibrate the cost so that one unlock takes about this
                                  many seconds on this machine (0 to 60; default 0.5).
          --kdf-ops <n>           Argon2id passes (1 to 64), instead of calibrating.
          --kdf-mem <size>        Argon2id memory, 8K to 4G (default 64M).
          --pbkdf2-iterations <n>
                                  PBKDF2-HMAC-SHA512 iterations (1000 to 100000000),
                                  instead of calibrating.
          --apply                 Set the password slot to these costs (asks for the
                                  password).
          --password-file <file>  Read the vault password from the first line of FILE (a
                                  regular file or a pipe) instead of
                                  VAULT_PASSWORD_COMMAND or the terminal.
          --json                  Print the result as one JSON document (docs/json.md);
                                  errors too.
          -h, --help              Show help information.

        """)
    }
}
