import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `vault agent` becomes the `vault-agent` executable installed beside `vault` (docs/agent.md
/// "Processes"): the long-lived process maps no HTTP client, server or terminal library, and a
/// missing half of the pair is an error that says what to do, never a silent fallback.
final class AgentProgramTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws { h = try AgentProcess.preparedVault() }

    override func tearDown() { _ = try? h?.run(["lock"]); h = nil }

    func testTheAgentProcessIsVaultAgentAndMapsNoHTTPClient() throws {
        let agent = try AgentProcess(h)
        try h.ok(["unlock"] + h.pw)
        // `vault agent` replaced itself (execve): the pid it was started as answers, as vault-agent.
        XCTAssertEqual(try agent.status()["pid"] as? Int, Int(agent.pid))
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent.pid)/exe")
        XCTAssertEqual((exe as NSString).lastPathComponent, "vault-agent")
        XCTAssertEqual((exe as NSString).deletingLastPathComponent, CLIHarness.productsDirectory.resolvingSymlinksInPath().path)
        let maps = try String(contentsOfFile: "/proc/\(agent.pid)/maps", encoding: .utf8)
        for library in ["libcurl", "libmicrohttpd", "libncurses", "libnghttp2", "libssh2", "libldap"] {
            XCTAssertFalse(maps.contains(library), "the agent maps \(library)")
        }
        // Its helpers are the vault binary beside it: the unlock's sync pass ran (not logged in).
        XCTAssertNotNil(waitFor(30) { agent.log.contains("sync pass started") }, agent.log)
        XCTAssertNotNil(try waitFor(30) { (try agent.status()["work"] as? [String: Any])?["passes"] as? Int == 1 }, agent.log)
        XCTAssertEqual((try agent.status()["work"] as? [String: Any])?["lastResult"] as? String, "not logged in to a server", agent.log)
    }

    /// A `vault` installed without its `vault-agent`: `vault agent` and `vault agent install`
    /// refuse with a hint, and nothing starts.
    func testVaultWithoutVaultAgentBesideItSaysSo() throws {
        let bin = try lonelyCopy(of: "vault")
        var r = try h.run(["agent"], program: bin)
        XCTAssertEqual(r.status, 4, r.stderr)
        XCTAssertTrue(r.stderr.contains("\((bin as NSString).deletingLastPathComponent)/vault-agent is missing"), r.stderr)
        XCTAssertTrue(r.stderr.contains("hint: install both from one build (scripts/install.sh"), r.stderr)
        XCTAssertTrue(try h.ok(["agent", "status"]).out.contains("not running"))

        let config = h.root.appendingPathComponent("xdg-config")
        r = try h.run(["agent", "install"], env: ["XDG_CONFIG_HOME": config.path, "VAULT_SYSTEMCTL": "/bin/false"], program: bin)
        XCTAssertEqual(r.status, 4, r.stderr)
        XCTAssertTrue(r.stderr.contains("vault-agent is missing"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: config.appendingPathComponent("systemd").path), "a unit was written")
    }

    /// A `vault-agent` without the `vault` that runs its helpers refuses to start.
    func testVaultAgentWithoutVaultBesideItRefusesToStart() throws {
        let bin = try lonelyCopy(of: "vault-agent")
        var r = try h.run([], program: bin)
        XCTAssertEqual(r.status, 4, r.stderr)
        XCTAssertTrue(r.stderr.contains("vault-agent: \((bin as NSString).deletingLastPathComponent)/vault is missing"), r.stderr)
        XCTAssertTrue(try h.ok(["agent", "status"]).out.contains("not running"))
        // It takes no arguments (the vault comes from the environment, as for `vault`).
        r = try h.run(["--vault", "x"], program: bin)
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("vault-agent takes no arguments"), r.stderr)
        r = try h.run(["--help"], program: bin)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.out.hasPrefix("usage: vault-agent\n"), r.out)
    }

    /// `name` from the products folder, alone in a folder of its own (a hard link when it can be).
    private func lonelyCopy(of name: String) throws -> String {
        let dir = h.root.appendingPathComponent("lonely-bin")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = CLIHarness.productsDirectory.appendingPathComponent(name).path, target = dir.appendingPathComponent(name).path
        if link(source, target) != 0 { try FileManager.default.copyItem(atPath: source, toPath: target) }
        return target
    }
}
