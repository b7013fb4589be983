import Foundation
import VaultTestSupport
import XCTest
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// A real `vault agent` process for a `CLIHarness` vault (foreground mode, as a systemd user
/// unit runs it), with the harness's own runtime folder; its log goes to a file.
final class AgentProcess: @unchecked Sendable {
    let h: CLIHarness
    let logFile: URL
    private(set) var process: Process

    /// A new vault with the real keyring and a runtime folder for an agent: the start of the
    /// agent's tests (skipped without a Secret Service).
    static func preparedVault() throws -> CLIHarness {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service (run scripts/test.sh)")
        let h = try CLIHarness()
        try h.initVault()
        try prepare(h)
        return h
    }

    /// Gives `h` a runtime folder of its own (`XDG_RUNTIME_DIR`, 0700) for the agent's socket.
    static func prepare(_ h: CLIHarness) throws {
        let run = h.root.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        h.env["XDG_RUNTIME_DIR"] = run.path
    }

    /// Starts the agent and waits until it answers `vault agent status`.
    init(_ h: CLIHarness, env extra: [String: String] = [:]) throws {
        if h.env["XDG_RUNTIME_DIR"].map({ !$0.hasPrefix(h.root.path) }) ?? true { try Self.prepare(h) }
        self.h = h
        logFile = h.root.appendingPathComponent("agent-\(UUID().uuidString.prefix(8)).log")
        process = Process()
        try start(extra)
    }

    private func start(_ extra: [String: String]) throws {
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        let p = Process()
        // Through `setpriv --pdeathsig`: an agent never outlives a test run that died.
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--pdeathsig", "KILL", CLIHarness.vaultBinary, "agent"]
        p.environment = h.env.merging(extra) { $1 }
        p.standardOutput = log
        p.standardError = log
        p.standardInput = FileHandle.nullDevice
        try p.run()
        process = p
        // Its readiness signal: it answers `vault agent status`.
        let ready = try eventually(within: 30) {
            if !p.isRunning { throw TransferTestError("the agent exited at start: \(self.log)") }
            return (try? status()) != nil
        }
        if !ready { throw TransferTestError("the agent did not answer within 30 s: \(self.log)") }
    }

    /// Starts it again (after `kill9`), with the same environment plus `extra`.
    func restart(env extra: [String: String] = [:]) throws { try start(extra) }

    var pid: pid_t { process.processIdentifier }
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// `vault agent status --json`'s `agent` object; throws when no agent answers.
    func status() throws -> [String: Any] {
        let r = try h.run(["agent", "status", "--json"])
        guard r.status == 0, let j = r.json as? [String: Any], let a = j["agent"] as? [String: Any] else {
            throw TransferTestError("no agent status: \(r.stderr)")
        }
        return a
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Waits until `condition` holds, for at most `bound` seconds (a safety net, not a timing
/// assertion); returns the seconds it took, or nil when it never held.
@discardableResult
func waitFor(_ bound: TimeInterval = 30, _ condition: () throws -> Bool) rethrows -> TimeInterval? {
    let start = Date()
    return try eventually(within: bound, condition) ? Date().timeIntervalSince(start) : nil
}

/// A private D-Bus daemon standing in for the system bus, where a test sends logind's signals.
final class PrivateBus: @unchecked Sendable {
    let address: String
    private let process: Process

    init() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        p.arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        var text = ""
        while !text.contains("\n") {
            let d = out.fileHandleForReading.availableData
            if d.isEmpty { break }
            text += String(decoding: d, as: UTF8.self)
        }
        address = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !address.isEmpty else { throw TransferTestError("dbus-daemon gave no address") }
    }

    /// `dbus-send --type=signal` on this bus (or, with `session`, on the test's session bus).
    static func send(_ bus: String, path: String, member: String, args: [String] = []) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
        p.arguments = [bus, "--type=signal", path, member] + args
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw TransferTestError("dbus-send \(member) failed") }
    }

    func send(path: String, member: String, args: [String] = []) throws {
        try Self.send("--bus=\(address)", path: path, member: member, args: args)
    }

    deinit { process.terminate(); process.waitUntilExit() }
}

extension CLIHarness {
    /// The vault id (from `vault status --json`, which needs no unlock).
    func vaultId() throws -> String {
        try XCTUnwrap((try ok(["status", "--json"]).json as? [String: Any])?["vaultId"] as? String)
    }

    /// This local copy's id (`VaultLayout.localId`): what names its keyring item and its agent.
    func localId(_ id: String) -> String { VaultLayout(root: env["VAULT_HOME"] ?? home.path).localId(vaultId: id) }

    /// `secret-tool lookup vault <id> copy <local id>`: this local copy's keyring item's secret,
    /// or nil when there is none.
    func keyringItem(_ id: String) throws -> String? {
        let r = try toolOutput("/usr/bin/secret-tool", ["lookup", "xdg:schema", "org.vault.LocalSession", "vault", id, "copy", localId(id)],
                            environment: env)
        return r.status == 0 && !r.output.isEmpty ? r.output : nil
    }

    /// Puts `secret` back as the vault's session item, as a same-user process could
    /// (`secret-tool store`, the schema attribute included so the vault finds it).
    func storeKeyringItem(_ id: String, _ secret: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/secret-tool")
        p.arguments = ["store", "--label=stolen", "--collection=session", "xdg:schema", "org.vault.LocalSession", "vault", id, "copy", localId(id)]
        p.environment = env
        let input = Pipe()
        p.standardInput = input
        try p.run()
        input.fileHandleForWriting.write(Data(secret.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw TransferTestError("secret-tool store failed") }
    }
}
