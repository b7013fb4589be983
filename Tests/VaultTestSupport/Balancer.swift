import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's `haproxy` on 127.0.0.1, round-robin over `vault-server` instances as a deployment
/// runs them: each request to the next instance, an instance out of rotation once its
/// `GET /readyz` fails three times running (checked every 200 ms: one slow probe on a loaded
/// machine does not take every instance out at once) and back when it answers 200, a request that could
/// not reach an instance tried on another, `X-Forwarded-For` added. Started by the test that uses
/// it, on a free port; stopped by `stop()` or when released.
public final class Balancer: @unchecked Sendable {
    public static let binary = "/usr/sbin/haproxy"
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: binary) }
    public static let unavailableMessage = "haproxy is not installed (\(binary)): apt-get install haproxy (scripts/install-deps.sh installs it)"

    public let port: UInt16
    public var url: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    private var process: Process?

    /// Whether clients reach it over TLS (it terminates TLS; the backends speak plain HTTP).
    public let tls: Bool

    /// Starts haproxy in front of `backends` (ports on 127.0.0.1), its configuration in `root`;
    /// with `tls` (a PEM file of the certificate, then its key) it terminates TLS for them.
    public init(root: URL, backends: [UInt16], tls pem: URL? = nil) throws {
        tls = pem != nil
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        let config = root.appendingPathComponent("haproxy.cfg")
        try Data(Self.configuration(port: port, backends: backends, tls: pem).utf8).write(to: config)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["-db", "-f", config.path]   // -db: stay in the foreground, no daemon
        p.standardOutput = FileHandle.nullDevice
        p.standardError = try FileHandle(forWritingTo: Self.touch(root.appendingPathComponent("haproxy.log")))
        try p.run()
        process = p
        try waitUntil("haproxy to listen on \(port)", timeout: 20) {
            guard p.isRunning else { throw FreePortError(description: "haproxy exited: see \(root.path)/haproxy.log") }
            return loopbackAccepts(port)
        }
    }

    deinit { stop() }

    public func stop() {
        guard let p = process else { return }
        process = nil
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
    }

    /// The configuration: HTTP mode, round-robin, health checks on `/readyz` (each given 5 s), long server
    /// timeouts for event streams (the server sends a keep-alive comment every 15 s).
    static func configuration(port: UInt16, backends: [UInt16], tls pem: URL? = nil) -> String {
        let servers = backends.enumerated().map { i, p in
            "    server vault\(i) 127.0.0.1:\(p) check inter 200ms fall 3 rise 1"
        }.joined(separator: "\n")
        return """
        global
            maxconn 2000
        defaults
            mode http
            timeout connect 2s
            timeout client 120s
            timeout server 120s
            timeout http-request 30s
            # A check may take its time (a probe object to the content store on a loaded machine); without
            # this haproxy bounds it by `inter`, and an instance slow to answer /readyz leaves rotation.
            timeout check 5s
            retries 3
            option redispatch
            option forwardfor
        frontend vault
            bind 127.0.0.1:\(port)\(pem.map { " ssl crt \($0.path)" } ?? "")
            default_backend instances
        backend instances
            balance roundrobin
            option httpchk GET /readyz
            http-check expect status 200
        \(servers)

        """
    }

    private static func touch(_ url: URL) -> URL {
        if !FileManager.default.fileExists(atPath: url.path) { FileManager.default.createFile(atPath: url.path, contents: nil) }
        return url
    }
}
