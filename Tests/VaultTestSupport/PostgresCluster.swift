import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL 15 for tests: `initdb` into a folder of its own under /tmp (`/tmp/pg-…`),
/// `postgres` (a child of the test process) listening on 127.0.0.1 at a free port (and a Unix socket in the same folder),
/// password (SCRAM) authentication for the user `vault`, stopped and removed on `stop()` and on
/// deinit. As root the server runs as the `postgres` user (PostgreSQL refuses root).
///
/// `shared` is one cluster per test process, started on first use and stopped at exit; each test
/// takes a fresh database of it (`makeDatabase()`).
public final class PostgresCluster: @unchecked Sendable {
    /// Where Debian's PostgreSQL 15 binaries are.
    public static let binDir = "/usr/lib/postgresql/15/bin"
    /// Whether the binaries are installed (tests skip, saying so, when not).
    public static var available: Bool {
        ["initdb", "pg_ctl", "postgres"].allSatisfy { FileManager.default.isExecutableFile(atPath: "\(binDir)/\($0)") }
    }
    /// What a test that skips says.
    public static let unavailableMessage = "PostgreSQL 15 is not installed (\(binDir)/initdb, pg_ctl, postgres): apt-get install postgresql"

    public static let user = "vault"
    public static let password = "vault-test-password"

    public let dir: String
    public let port: UInt16
    private var running = false
    private var server: Process?
    private var databases = 0
    private let lock = NSLock()

    /// `postgresql://vault:…@127.0.0.1:PORT/DATABASE`.
    public func url(database: String = "postgres", password: String = PostgresCluster.password) -> String {
        "postgresql://\(Self.user):\(password)@127.0.0.1:\(port)/\(database)"
    }

    /// Runs initdb and starts the server; throws with its log when it does not come up in 60 s.
    public init() throws {
        guard Self.available else { throw PostgresClusterError(Self.unavailableMessage) }
        dir = "/tmp/pg-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        port = try freeLoopbackPort()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let pwfile = dir + "/pw"
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: pwfile))
        if getuid() == 0 { _ = try Self.tool("/bin/chown", ["-R", "postgres:postgres", dir], asPostgres: false) }
        let initdb = try Self.tool("\(Self.binDir)/initdb", ["-D", dir + "/data", "-U", Self.user, "--pwfile", pwfile,
                                                             "--auth=scram-sha-256", "--locale=C", "-E", "UTF8", "--no-sync", "--no-instructions"])
        guard initdb.status == 0 else { throw PostgresClusterError("initdb failed: \(initdb.output)") }
        try startServer()
    }

    /// Starts `postgres` on the cluster and waits until it accepts connections. The server runs
    /// as a child of this process (not daemonized by pg_ctl: Foundation's Process would wait for
    /// the daemon to close what it inherited).
    private func startServer() throws {
        let p = Process()
        let args = ["-D", dir + "/data", "-c", "listen_addresses=127.0.0.1", "-p", "\(port)", "-k", dir,
                    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                    "-c", "shared_buffers=16MB", "-c", "max_connections=60"]
        Self.configure(p, "\(Self.binDir)/postgres", args, asPostgres: true)
        if !FileManager.default.fileExists(atPath: dir + ".log") { FileManager.default.createFile(atPath: dir + ".log", contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + ".log"))
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        p.standardInput = FileHandle.nullDevice
        try p.run()
        try? log.close()
        server = p
        let ready = "\(Self.binDir)/pg_isready"
        let port = port
        do {
            try waitUntil("PostgreSQL accepting connections on 127.0.0.1:\(port)", timeout: 60) {
                guard p.isRunning else { return true }
                return try Self.tool(ready, ["-q", "-h", "127.0.0.1", "-p", "\(port)"], asPostgres: false).status == 0
            }
        } catch {
            p.terminate()
            throw error
        }
        guard p.isRunning else {
            let text = (try? String(contentsOfFile: dir + ".log", encoding: .utf8)) ?? ""
            throw PostgresClusterError("postgres exited with status \(p.terminationStatus): \(text)")
        }
        running = true
    }

    /// Stops the server (`-m fast`: every connection is closed) and starts it again on the same
    /// data and port: what clients see when the database restarts.
    public func restart() throws {
        try lock.withLock {
            _ = try Self.tool("\(Self.binDir)/pg_ctl", ["-D", dir + "/data", "-m", "fast", "-w", "stop"])
            server?.waitUntilExit()
            running = false
            try startServer()
        }
    }

    deinit { stop() }

    /// Stops the server at once (`-m immediate`) and removes its folder.
    public func stop() {
        lock.lock(); defer { lock.unlock() }
        if running {
            _ = try? Self.tool("\(Self.binDir)/pg_ctl", ["-D", dir + "/data", "-m", "immediate", "-w", "stop"])
            server?.waitUntilExit()
            running = false
        }
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: dir + ".log")
    }

    /// A new, empty database (`CREATE DATABASE vault_N`); returns its URL.
    public func makeDatabase() throws -> String {
        let name: String = lock.withLock { databases += 1; return "vault_\(databases)" }
        let psql = try Self.tool("\(Self.binDir)/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", url(), "-c", "CREATE DATABASE \(name)"],
                                 asPostgres: false)
        guard psql.status == 0 else { throw PostgresClusterError("CREATE DATABASE \(name) failed: \(psql.output)") }
        return url(database: name)
    }

    // MARK: The process-wide cluster

    nonisolated(unsafe) private static var sharedCluster: PostgresCluster?
    private static let sharedLock = NSLock()

    /// The cluster of this test process, started on first use and stopped when the process exits.
    public static func shared() throws -> PostgresCluster {
        try sharedLock.withLock {
            if let c = sharedCluster { return c }
            let c = try PostgresCluster()
            sharedCluster = c
            atexit { PostgresCluster.sharedCluster?.stop() }
            return c
        }
    }

    // MARK: Helpers

    /// Sets `p` to run `path` with `arguments`, through `runuser -u postgres` when root and `asPostgres`.
    static func configure(_ p: Process, _ path: String, _ arguments: [String], asPostgres: Bool) {
        if asPostgres && getuid() == 0 {
            p.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            p.arguments = ["-u", "postgres", "--", path] + arguments
        } else {
            p.executableURL = URL(fileURLWithPath: path)
            p.arguments = arguments
        }
        p.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
    }

    /// Runs a PostgreSQL tool to its end (as `postgres` when root and `asPostgres`); its status and
    /// its standard output and error together.
    static func tool(_ path: String, _ arguments: [String], asPostgres: Bool = true) throws -> (status: Int32, output: String) {
        let p = Process()
        configure(p, path, arguments, asPostgres: asPostgres)
        // Output goes to a file, not a pipe: a server a tool leaves running would hold a pipe open.
        let outPath = NSTemporaryDirectory() + "pg-tool-\(UUID().uuidString.prefix(8)).out"
        FileManager.default.createFile(atPath: outPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        try? out.close()
        let data = FileManager.default.contents(atPath: outPath) ?? Data()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

public struct PostgresClusterError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
