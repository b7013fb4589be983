import Foundation
import XCTest

/// `echoServerScript` running in a python3 subprocess on 127.0.0.1 (a free port). The
/// server exits when its stdin closes, so a crashed test run leaves no process behind.
final class LocalServer {
    let port: Int
    let scheme: String
    private let process: Process
    private let stdinPipe = Pipe()

    /// The script, written (atomically, same content every run) once per test process.
    static let script: String = {
        let path = NSTemporaryDirectory() + "vault-http-echo-server.py"
        try? Data(echoServerScript.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return path
    }()

    /// `tlsMode` "legacy" offers only TLS 1.0/1.1, "static-rsa" only TLS 1.2 static-RSA suites.
    init(tls: SelfSignedCertificate? = nil, tlsMode: String? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var args = ["python3", "-u", Self.script, "--watch-stdin"]
        if let tls { args += ["--tls", tls.certPath, tls.keyPath] + (tlsMode.map { [$0] } ?? []) }
        process.arguments = args
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = stdinPipe
        process.standardError = FileHandle.nullDevice
        scheme = tls == nil ? "http" : "https"
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = out.fileHandleForReading.availableData
            guard !more.isEmpty else { throw TestFailure("echo server did not start") }
            line.append(more)
        }
        guard let p = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw TestFailure("echo server printed no port") }
        port = p
    }

    /// `scheme://127.0.0.1:port` + `path`.
    func url(_ path: String, host: String = "127.0.0.1") -> String { "\(scheme)://\(host):\(port)\(path)" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? stdinPipe.fileHandleForWriting.close()
    }

    deinit { stop() }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

extension XCTestCase {
    /// Starts a server that is stopped when the test ends.
    func startServer(tls: SelfSignedCertificate? = nil, tlsMode: String? = nil) throws -> LocalServer {
        let server = try LocalServer(tls: tls, tlsMode: tlsMode)
        addTeardownBlock { server.stop() }
        return server
    }
}
