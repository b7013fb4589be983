import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A FIDO2 security key for one test: scripts/soft-fido2.py (a CTAP 2.0 authenticator with
/// hmac-secret and clientPIN, speaking CTAPHID reports on a Unix socket) with its own state file,
/// the "device": the same state is the same key, a fresh one another key. `vault` reaches it
/// through `VAULT_TEST_FIDO2_SOCKET` (debug builds only). Stopped on `stop()` and on deinit; its
/// folder is removed with it.
public final class SoftwareFIDO2 {
    public static let python = "/usr/bin/python3"
    /// The authenticator's script in this package.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/soft-fido2.py").path
    /// Whether Debian's python3-fido2 and python3-cryptography are there for it.
    public static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", "import fido2.cbor, cryptography"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    public let dir: URL
    public let socket: String
    /// The key's state (its secret, PIN and retries): start another with it for the same key.
    public let state: URL
    private var process: Process?

    /// Starts the authenticator on `state` (a fresh key when nil), with `pin` set, and `presence`
    /// "ok" (touches are approved), "timeout" (never touched), "deny", or "unplug" (it exits
    /// while the touch is awaited).
    public init(state: URL? = nil, pin: String? = nil, presence: String = "ok") throws {
        dir = URL(fileURLWithPath: "/tmp").appendingPathComponent("fido2-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.state = state ?? dir.appendingPathComponent("state.json")
        socket = dir.appendingPathComponent("s").path
        process = try startSocketServer(Self.python, [Self.script, "--socket", socket, "--state", self.state.path, "--presence", presence]
                                            + (pin.map { ["--pin", $0] } ?? []), socket: socket, name: "soft-fido2.py")
    }

    /// Stops the authenticator (the key unplugged); its socket file is removed too.
    public func stop() {
        guard let p = process else { return }
        if p.isRunning { p.terminate(); p.waitUntilExit() }
        process = nil
        unlink(socket)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }
}
