import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real TPM 2.0 for one test: an `swtpm socket --tpm2` process with its own state folder,
/// reached over a Unix socket (`tcti` is the tpm2-tss configuration for it). Stopped on `stop()`
/// and on deinit; its state folder is removed with it unless `keepState`.
public final class SoftwareTPM {
    public static let binary = ["/usr/bin/swtpm", "/usr/local/bin/swtpm"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var available: Bool { binary != nil }

    public let dir: URL
    public let socket: String
    public var tcti: String { "swtpm:path=\(socket)" }
    private var process: Process?

    /// Starts swtpm on the state in `state` (a fresh one when nil: a TPM of another machine).
    public init(state: URL? = nil) throws {
        guard let bin = Self.binary else { throw SoftwareTPMError("swtpm is not installed") }
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("swtpm-\(UUID().uuidString.prefix(8))")
        let stateDir = state ?? dir.appendingPathComponent("state")
        // The socket lives in `dir`, which a given `state` (another TPM's folder) does not create.
        for folder in [dir, stateDir] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        socket = dir.appendingPathComponent("s").path
        process = try startSocketServer(bin, ["socket", "--tpm2", "--tpmstate", "dir=\(stateDir.path)",
                                              "--server", "type=unixio,path=\(socket)", "--ctrl", "type=unixio,path=\(socket).ctrl",
                                              "--flags", "not-need-init,startup-clear"], socket: socket, name: "swtpm socket")
    }

    /// Whether a Unix socket at `path` accepts a connection (swtpm binds before it listens).
    public static func accepts(_ path: String) -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { buf in
            for (i, b) in bytes.enumerated() { buf[i] = b }
        }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// The state folder, to start another swtpm on the same TPM (the same machine).
    public var stateDir: URL { dir.appendingPathComponent("state") }

    /// Kills swtpm at once (the TPM going away mid-session).
    public func kill() {
        guard let p = process, p.isRunning else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    public func stop() {
        guard let p = process else { return }
        if p.isRunning { p.terminate(); p.waitUntilExit() }
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }
}

/// Starts `executable ARGUMENTS` (its output discarded) and waits until it accepts connections on
/// the Unix socket `socket`; `name` is for the error when it exits first.
func startSocketServer(_ executable: String, _ arguments: [String], socket: String, name: String) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    try waitUntil("\(name) listening on \(socket)", timeout: 30) { SoftwareTPM.accepts(socket) || !p.isRunning }
    guard p.isRunning else { throw SoftwareTPMError("\(name) exited with status \(p.terminationStatus)") }
    return p
}

public struct SoftwareTPMError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
