import Foundation

/// A Unix-socket relay in front of a `SoftwareTPM` that passes the first `cutAfter` bytes of the
/// TPM's data channel (both directions counted) and then drops every connection, now and later:
/// the TPM going away in the middle of a call, at a chosen byte. The control channel
/// (`S.ctrl`) is relayed whole. `bytes` is how many bytes have passed so far.
public final class CuttingTPMProxy {
    public let socket: String
    public var tcti: String { "swtpm:path=\(socket)" }
    private let countFile: URL
    private let process: Process

    static let script = #"""
import os, socket, sys, threading
listen, target, cut_at, count_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
total = [0]
lock = threading.Lock()
def pump(a, b, cutting):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            if cutting:
                with lock:
                    room = cut_at - total[0]
                    if room <= 0: break
                    d = d[:room]
                    total[0] += len(d)
                    with open(count_file, 'w') as f: f.write(str(total[0]))
            b.sendall(d)
            if cutting and total[0] >= cut_at: break
    except OSError: pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
def relay(path_in, path_out, cutting):
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path_in)
    srv.listen(16)
    while True:
        c, _ = srv.accept()
        u = socket.socket(socket.AF_UNIX)
        try: u.connect(path_out)
        except OSError:
            c.close(); continue
        threading.Thread(target=pump, args=(c, u, cutting), daemon=True).start()
        threading.Thread(target=pump, args=(u, c, cutting), daemon=True).start()
threading.Thread(target=relay, args=(listen + '.ctrl', target + '.ctrl', False), daemon=True).start()
relay(listen, target, True)
"""#

    public init(_ tpm: SoftwareTPM, cutAfter: Int) throws {
        let dir = tpm.dir.appendingPathComponent("cut-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        socket = dir.appendingPathComponent("s").path
        countFile = dir.appendingPathComponent("bytes")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, socket, tpm.socket, String(cutAfter), countFile.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let (sock, p) = (socket, process)
        try waitUntil("the TPM relay listening on \(sock)", timeout: 30) {
            (SoftwareTPM.accepts(sock) && SoftwareTPM.accepts(sock + ".ctrl")) || !p.isRunning
        }
        guard p.isRunning else { throw SoftwareTPMError("the TPM relay exited with status \(p.terminationStatus)") }
    }

    /// The bytes of the data channel relayed so far.
    public var bytes: Int { (try? String(contentsOf: countFile, encoding: .utf8)).flatMap { Int($0) } ?? 0 }

    deinit {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
    }
}
