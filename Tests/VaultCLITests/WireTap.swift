import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 in front of a plain-HTTP `vault-server` that appends every byte it
/// forwards, both ways, to a log: what anyone on the wire would see. `vault login` to its `url`
/// sends everything through it. (A small Python program: no code shared with the client.)
final class WireTap: @unchecked Sendable {
    let log: URL
    private(set) var port: UInt16 = 0
    private let process: Process

    var url: String { "http://127.0.0.1:\(port)" }

    static let script = #"""
import socket, sys, threading
target = int(sys.argv[1]); log = open(sys.argv[2], "ab", buffering=0); lock = threading.Lock()
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); srv.bind(("127.0.0.1", 0)); srv.listen(64)
print(srv.getsockname()[1], flush=True)
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            with lock: log.write(d)
            b.sendall(d)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
def serve(c):
    u = socket.create_connection(("127.0.0.1", target))
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    pump(u, c)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""#

    init(targetPort: UInt16, log: URL) throws {
        self.log = log
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", Self.script, String(targetPort), log.path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        var line = ""
        while !line.contains("\n") {
            let d = out.fileHandleForReading.availableData
            if d.isEmpty { break }
            line += String(decoding: d, as: UTF8.self)
        }
        guard let port = UInt16(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TransferTestError("the wire tap did not start: \(line)")
        }
        self.port = port
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    /// Everything seen on the wire so far.
    var bytes: Data { (try? Data(contentsOf: log)) ?? Data() }
}

/// Every file under `dir` (recursively) whose bytes contain `marker`, as paths.
func filesContaining(_ marker: String, under dir: URL) -> [String] {
    let needle = Data(marker.utf8)
    var hits: [String] = []
    let e = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: [.isRegularFileKey])
    while let url = e?.nextObject() as? URL {
        guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
              let d = try? Data(contentsOf: url), d.range(of: needle) != nil else { continue }
        hits.append(url.path)
    }
    return hits
}
