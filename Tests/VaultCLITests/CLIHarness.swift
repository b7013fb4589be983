import Foundation
import VaultTestSupport
import XCTest
import VaultTestSupport

/// Runs the real `vault` binary as a user would, in a throwaway VAULT_HOME.
/// Unchecked: `env` is only changed before commands run; `run` may be called from several threads.
final class CLIHarness: @unchecked Sendable {
    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var out: String { String(decoding: stdout, as: UTF8.self) }
        var json: Any? { try? JSONSerialization.jsonObject(with: stdout) }
    }

    let root: URL
    let home: URL
    let tmp: URL
    let passwordFile: URL
    var env: [String: String]
    static let password = "correct horse battery"

    /// The folder holding the built products (vault, vault-server).
    static var productsDirectory: URL { BuiltProducts.directory }

    static var vaultBinary: String { productsDirectory.appendingPathComponent("vault").path }

    static var keyringAvailable: Bool {
        let env = ProcessInfo.processInfo.environment
        return env["DBUS_SESSION_BUS_ADDRESS"] != nil && env["VAULT_NO_KEYRING"] != "1"
    }

    init(keyring: Bool = true) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("vault-e2e-\(UUID().uuidString)")
        home = root.appendingPathComponent("vault")
        tmp = root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        passwordFile = root.appendingPathComponent("pw")
        try Data((Self.password + "\n").utf8).write(to: passwordFile)
        var e = ProcessInfo.processInfo.environment
        e["VAULT_HOME"] = home.path
        e["TMPDIR"] = tmp.path
        e["NO_COLOR"] = "1"
        e["VAULT_LOCK_TIMEOUT"] = "2"
        e.removeValue(forKey: "VAULT_PASSWORD_COMMAND")
        if !keyring { e["VAULT_NO_KEYRING"] = "1" }
        env = e
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    /// Runs `vault` (or `program`, another executable) with `args` in this harness's environment.
    @discardableResult
    func run(_ args: [String], stdin: Data? = nil, env extra: [String: String] = [:], program: String = CLIHarness.vaultBinary) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        p.environment = env.merging(extra) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin == nil ? FileHandle.nullDevice : Pipe()
        try p.run()
        if let stdin, let inPipe = p.standardInput as? Pipe {
            inPipe.fileHandleForWriting.write(stdin); try inPipe.fileHandleForWriting.close()
        }
        let output = readToEnd(stdout: out, stderr: err)
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: output.stdout, stderr: String(decoding: output.stderr, as: UTF8.self))
    }

    /// Runs and asserts success.
    @discardableResult
    func ok(_ args: [String], env extra: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let r = try run(args, env: extra)
        XCTAssertEqual(r.status, 0, "vault \(args.joined(separator: " ")) failed: \(r.stderr)", file: file, line: line)
        return r
    }

    /// `vault init` with a fast KDF for tests.
    func initVault(extra: [String] = []) throws {
        try ok(["init", "--password-file", passwordFile.path, "--kdf-ops", "1", "--kdf-mem", "8M"] + extra)
    }

    var pw: [String] { ["--password-file", passwordFile.path] }

    /// Writes a local file under the harness root.
    func localFile(_ name: String, _ bytes: Data) throws -> String {
        let url = root.appendingPathComponent(name)
        try bytes.write(to: url)
        return url.path
    }

    func blobFiles(_ area: String) throws -> [URL] {
        let dir = home.appendingPathComponent(area)
        return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "blob" }
    }
}

extension CLIHarness {
    /// Puts `json` in force as this harness's enterprise policy: `policy.json` in its root, read
    /// unsigned (`VAULT_POLICY_KEY_FILE` names a key that does not exist).
    func usePolicy(_ json: String) throws {
        let file = root.appendingPathComponent("policy.json")
        try Data(json.utf8).write(to: file)
        env["VAULT_POLICY_FILE"] = file.path
        env["VAULT_POLICY_KEY_FILE"] = root.appendingPathComponent("no-signing-key.pub").path
    }
}

/// A value shared between threads under a lock.
final class Box<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ v: T) { value = v }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ v: T) { lock.lock(); value = v; lock.unlock() }
    func update(_ f: (inout T) -> Void) { lock.lock(); f(&value); lock.unlock() }
}
