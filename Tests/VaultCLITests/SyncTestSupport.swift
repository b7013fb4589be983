import Foundation
import VaultTestSupport
import XCTest

/// What the end-to-end sync tests share: fast retries, logging in to a test server, and reading
/// a node or the transfer list back through the real binary.
extension CLIHarness {
    /// Fast retries for tests (the defaults start at 0.5 s and cap at 30 s).
    static let fastRetry = ["VAULT_RETRY_BASE_MS": "50", "VAULT_RETRY_CAP_MS": "500", "VAULT_RETRY_MAX": "30"]

    /// Uses `fastRetry` for every later command.
    func useFastRetry() {
        for (k, v) in Self.fastRetry { env[k] = v }
    }

    /// Path → "folder" or the file's SHA-256, from `vault tree --json`: what two devices that
    /// synced must agree on.
    func syncTree() throws -> [String: String] {
        var out: [String: String] = [:]
        func walk(_ n: [String: Any]) {
            let path = n["path"] as? String ?? "?"
            if path != "/" { out[path] = n["type"] as? String == "folder" ? "folder" : (n["sha256"] as? String ?? "-") }
            for c in n["children"] as? [[String: Any]] ?? [] { walk(c) }
        }
        walk(try XCTUnwrap(try ok(["tree", "--json"] + pw).json as? [String: Any]))
        return out
    }

    /// `vault sync` started in the background (standard error piped), returned once `ready` holds
    /// or it has exited (at most a minute).
    func backgroundSync(until ready: () -> Bool) throws -> (Process, Pipe) {
        try background(["sync"], until: ready)
    }

    /// `vault ARGS` (with the password) started in the background (standard error piped),
    /// returned once `ready` holds or it has exited (at most a minute).
    func background(_ args: [String], until ready: () -> Bool) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.vaultBinary)
        p.arguments = args + pw
        p.environment = env
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        _ = eventually(within: 60) { ready() || !p.isRunning }
        return (p, err)
    }

    /// `vault login` to `server` with its test user.
    func login(to server: ServerHarness, extra: [String] = []) throws {
        try ok(["login", "--server", server.url, "--user", server.user,
                "--server-password-file", server.passwordFile.path] + extra + pw)
    }

    /// The `ls --json` entry of `path`.
    func node(_ path: String) throws -> [String: Any] {
        let all = try XCTUnwrap(try ok(["ls", (path as NSString).deletingLastPathComponent, "--json"] + pw).json as? [[String: Any]])
        return try XCTUnwrap(all.first { $0["path"] as? String == path }, "no \(path) in ls")
    }

    /// `vault transfers --json`.
    func transfers() throws -> [[String: Any]] {
        try XCTUnwrap(try ok(["transfers", "--json"] + pw).json as? [[String: Any]])
    }
}
