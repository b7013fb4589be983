import Foundation
import VaultTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real TPM 2.0 for one test: an `swtpm socket --tpm2` process with its own state folder,
/// reached over a Unix socket (`tcti` is the tpm2-tss configuration for it). Stopped on `stop()`
/// and on deinit; its state folder is removed with it unless `keepState`.
final class SoftwareTPM {
    static let binary = ["/usr/bin/swtpm", "/usr/local/bin/swtpm"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { binary != nil }

    let dir: URL
    let socket: String
    var tcti: String { "swtpm:path=\(socket)" }
    private var process: Process?

    /// Starts swtpm on the state in `state` (a fresh one when nil: a TPM of another machine).
    init(state: URL? = nil) throws {
        guard let bin = Self.binary else { throw SoftwareTPMError("swtpm is not installed") }
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("swtpm-\(UUID().uuidString.prefix(8))")
        let stateDir = state ?? dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: stateDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        socket = dir.appendingPathComponent("s").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bin)
        p.arguments = ["socket", "--tpm2", "--tpmstate", "dir=\(stateDir.path)",
                       "--server", "type=unixio,path=\(socket)", "--ctrl", "type=unixio,path=\(socket).ctrl",
                       "--flags", "not-need-init,startup-clear"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        let sock = socket
        try waitUntil("swtpm listening on \(sock)", timeout: 30) { FileManager.default.fileExists(atPath: sock) || !p.isRunning }
        guard p.isRunning else { throw SoftwareTPMError("swtpm socket exited with status \(p.terminationStatus)") }
    }

    /// The state folder, to start another swtpm on the same TPM (the same machine).
    var stateDir: URL { dir.appendingPathComponent("state") }

    /// Kills swtpm at once (the TPM going away mid-session).
    func kill() {
        guard let p = process, p.isRunning else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    func stop() {
        guard let p = process else { return }
        if p.isRunning { p.terminate(); p.waitUntilExit() }
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }
}

struct SoftwareTPMError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
