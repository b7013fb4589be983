import XCTest
import VaultTestSupport
@testable import VaultArguments

/// The parser's rules, one at a time, on the `Tool` fixture tree.
final class CommandParserTests: XCTestCase {
    func testPositionalsInOrderOptionalAndRepeating() throws {
        let c = try command(["copy", "a", "b"], as: Copy.self)
        XCTAssertEqual(c.source, "a"); XCTAssertEqual(c.dest, "b")
        XCTAssertNil(try command(["copy", "a"], as: Copy.self).dest)
        XCTAssertEqual(failure(["copy"])?.kind, .missingArgument("<source>"))
        XCTAssertEqual(failure(["copy", "a", "b", "c"])?.kind, .unexpectedArgument("c"))
        XCTAssertEqual(try command(["remote", "remove", "x", "y", "z"], as: Remote.Remove.self).names, ["x", "y", "z"])
        XCTAssertEqual(try command(["remote", "remove"], as: Remote.Remove.self).names, [])
        XCTAssertEqual(try command(["copy", "-", "b"], as: Copy.self).source, "-", "a lone dash is a word (standard input)")
    }

    func testOptionValueForms() throws {
        XCTAssertEqual(try command(["copy", "--label=x", "a"], as: Copy.self).label, "x")
        XCTAssertEqual(try command(["copy", "--label", "x", "a"], as: Copy.self).label, "x")
        XCTAssertEqual(try command(["copy", "a", "--label", "x"], as: Copy.self).label, "x", "options may follow arguments")
        XCTAssertEqual(try command(["copy", "--label=", "a"], as: Copy.self).label, "", "an empty value given with =")
        XCTAssertEqual(try command(["copy", "--label=a=b", "a"], as: Copy.self).label, "a=b", "only the first = splits")
        XCTAssertEqual(try command(["copy", "--label=-x", "a"], as: Copy.self).label, "-x", "a dash value attached with =")
        XCTAssertEqual(try command(["copy", "--wait-time", "-1.5", "a"], as: Copy.self).waitTime, -1.5, "a negative number is a value")
        XCTAssertEqual(try command(["copy", "a"], as: Copy.self).concurrency, 4, "the default")
        XCTAssertEqual(try command(["copy", "--concurrency", "8", "a"], as: Copy.self).concurrency, 8)
        XCTAssertEqual(try command(["copy", "--colour", "green", "a"], as: Copy.self).colour, .green)
    }

    func testShortFlagsBundledAndWithValues() throws {
        var c = try command(["copy", "-rf", "a"], as: Copy.self)
        XCTAssertTrue(c.recursive); XCTAssertTrue(c.force)
        c = try command(["copy", "-r", "-f", "a"], as: Copy.self)
        XCTAssertTrue(c.recursive && c.force)
        XCTAssertEqual(try command(["copy", "-xfoo", "a"], as: Copy.self).exclude, ["foo"])
        c = try command(["copy", "-rx", "foo", "a"], as: Copy.self)
        XCTAssertTrue(c.recursive); XCTAssertEqual(c.exclude, ["foo"])
        XCTAssertEqual(failure(["copy", "-rq", "a"])?.kind, .unknownOption("-q", belongsTo: []))
        XCTAssertEqual(failure(["copy", "a", "-x"])?.kind, .missingValue("-x"))
    }

    func testDoubleDashEndsOptions() throws {
        let c = try command(["copy", "--", "-r", "--force"], as: Copy.self)
        XCTAssertEqual(c.source, "-r"); XCTAssertEqual(c.dest, "--force")
        XCTAssertFalse(c.recursive); XCTAssertFalse(c.force)
        XCTAssertEqual(try command(["copy", "-f", "--", "--help"], as: Copy.self).source, "--help", "--help after -- is a word")
    }

    func testRepeatedOptions() throws {
        XCTAssertEqual(try command(["copy", "-x", "a", "--exclude", "b", "--exclude=c", "src"], as: Copy.self).exclude, ["a", "b", "c"])
        XCTAssertEqual(failure(["copy", "--label", "a", "--label", "b", "src"])?.kind, .repeatedOption("--label"))
        XCTAssertEqual(failure(["copy", "--concurrency", "2", "--concurrency=3", "src"])?.kind, .repeatedOption("--concurrency"))
        XCTAssertTrue(try command(["copy", "-r", "--recursive", "-r", "src"], as: Copy.self).recursive, "a flag again is no error")
    }

    func testMissingValues() {
        XCTAssertEqual(failure(["copy", "a", "--label"])?.kind, .missingValue("--label"))
        XCTAssertEqual(failure(["copy", "--label", "--force", "a"])?.kind, .missingValue("--label"), "an option is not a value")
        XCTAssertEqual(failure(["copy", "--label", "-r", "a"])?.kind, .missingValue("--label"))
        XCTAssertEqual(failure(["remote", "add", "origin"])?.kind, .missingArgument("--url <url>"))
    }

    func testUnknownAndMisplacedOptions() {
        XCTAssertEqual(failure(["copy", "a", "--bogus"])?.kind, .unknownOption("--bogus", belongsTo: []))
        XCTAssertEqual(failure(["copy", "a", "--bogus=1"])?.kind, .unknownOption("--bogus", belongsTo: []))
        XCTAssertEqual(failure(["--bogus"])?.kind, .unknownOption("--bogus", belongsTo: []))
        // An option of other commands: refused here, with the commands that take it named.
        XCTAssertEqual(failure(["remote", "add", "o", "--url", "u", "--concurrency", "2"])?.kind,
                       .unknownOption("--concurrency", belongsTo: ["tool copy"]))
        XCTAssertEqual(failure(["remote", "add", "o", "--url", "u", "--json"])?.kind,
                       .unknownOption("--json", belongsTo: ["tool copy", "tool remote remove", "tool queue list"]))
        XCTAssertEqual(failure(["queue", "drop", "e", "--limit", "3"])?.kind, .unknownOption("--limit", belongsTo: ["tool queue list"]))
        XCTAssertEqual(failure(["remote", "--url", "u", "add", "o"])?.kind, .unknownOption("--url", belongsTo: ["tool remote add"]),
                       "an option before its command's name is misplaced")
        let e = failure(["queue", "drop", "e", "--limit", "3"])
        XCTAssertEqual(e?.commandPath.displayName, "tool queue drop")
        XCTAssertEqual(e?.message, "unknown option '--limit' here (it is an option of `tool queue list`)")
        XCTAssertEqual(failure(["copy", "a", "--recursive=yes"])?.kind, .flagTakesNoValue("--recursive"))
    }

    func testTypedValueErrorsNameTheOption() {
        XCTAssertEqual(failure(["copy", "--concurrency", "x", "a"])?.kind, .invalidValue("--concurrency", value: "x", expected: "a whole number"))
        XCTAssertEqual(failure(["copy", "--concurrency", "1.5", "a"])?.kind, .invalidValue("--concurrency", value: "1.5", expected: "a whole number"))
        XCTAssertEqual(failure(["copy", "--colour", "blue", "a"])?.kind, .invalidValue("--colour", value: "blue", expected: "one of red or green"))
        XCTAssertEqual(failure(["copy", "--wait-time=soon", "a"])?.message, "--wait-time: 'soon' is not a number")
        XCTAssertEqual(failure(["queue", "list", "--limit", "9999999999999999999999"])?.kind,
                       .invalidValue("--limit", value: "9999999999999999999999", expected: "a whole number"))
    }

    func testValidateRunsAfterParsing() {
        XCTAssertEqual(failure(["copy", "--concurrency", "9", "a"])?.kind, .validation("--concurrency takes a number from 1 to 8"))
    }

    func testSubcommands() throws {
        XCTAssertEqual(try command(["remote", "add", "--url", "u", "o"], as: Remote.Add.self).name, "o")
        XCTAssertEqual(failure(["remote"])?.kind, .missingSubcommand(["add", "remove"]))
        XCTAssertEqual(failure(["remote", "rename"])?.kind, .unknownSubcommand("rename", known: ["add", "remove"]))
        XCTAssertEqual(failure([])?.kind, .missingSubcommand(["copy", "remote", "queue"]))
        XCTAssertEqual(failure(["frobnicate"])?.kind, .unknownSubcommand("frobnicate", known: ["copy", "remote", "queue"]))
    }

    func testDefaultSubcommandTakesItsOptions() throws {
        XCTAssertNil(try command(["queue"], as: Queue.List.self).limit)
        XCTAssertEqual(try command(["queue", "--limit", "3"], as: Queue.List.self).limit, 3)
        XCTAssertTrue(try command(["queue", "--json"], as: Queue.List.self).shared.json)
        XCTAssertEqual(try command(["queue", "list", "--limit=2"], as: Queue.List.self).limit, 2)
        XCTAssertEqual(try command(["queue", "drop", "e1"], as: Queue.Drop.self).entry, "e1")
        XCTAssertEqual(failure(["queue", "e1"])?.kind, .unknownSubcommand("e1", known: ["list", "drop"]))
    }

    func testHelpAndVersion() throws {
        for args in [["copy", "--help"], ["copy", "-h"], ["--help", "copy"], ["copy", "a", "--bogus", "-h"], ["copy", "-rh"]] {
            guard case .help(let path) = try CommandParser(Tool.self).parse(args) else { return XCTFail("\(args)") }
            XCTAssertEqual(path.displayName, "tool copy", "\(args)")
        }
        guard case .help(let p) = try CommandParser(Tool.self).parse(["remote", "--help", "add"]) else { return XCTFail() }
        XCTAssertEqual(p.displayName, "tool remote add")
        guard case .version(let v) = try CommandParser(Tool.self).parse(["--version"]) else { return XCTFail() }
        XCTAssertEqual(v, "1.2.3")
        XCTAssertEqual(failure(["copy", "--version"])?.kind, .unknownOption("--version", belongsTo: []))
    }

    func testNamesDerivedFromProperties() {
        let names = CommandPath([Tool.self, Copy.self]).definitions.compactMap(\.longName)
        XCTAssertEqual(names, ["recursive", "force", "concurrency", "label", "exclude", "colour", "wait-time", "json"])
    }

    /// Every word of a random command line is either taken or refused with a usage error; the
    /// parser never traps. Seeded; the seed is printed on failure.
    func testRandomCommandLinesNeverTrap() {
        let seed = TestSeed.make(self.name)
        var rng = SeededGenerator(seed: seed)
        let words = ["copy", "remote", "add", "remove", "queue", "list", "drop", "-r", "-f", "-rf", "-x", "-xa", "--", "-", "--label",
                     "--label=", "--concurrency", "3", "-3", "x", "--colour", "red", "--json", "--url", "u", "--limit", "--bogus", "-h", "=", ""]
        for _ in 0..<2000 {
            let args = (0..<Int(rng.next() % 7)).map { _ in words[Int(rng.next() % UInt64(words.count))] }
            do { _ = try CommandParser(Tool.self).parse(args) } catch {
                XCTAssertFalse(error.message.isEmpty, "seed \(seed): \(args)")
            }
        }
    }
}
