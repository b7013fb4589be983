import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A real `vault-server` process on 127.0.0.1 (with `--test-faults`), one user `alice`, and a
/// few API helpers that talk to it through `curl` so the checks never share code with the client.
///
/// With `instances` > 1 it is a deployment: that many processes on one PostgreSQL database
/// (`metadata`) and one shared data folder, behind haproxy (`Balancer`, round-robin); `url` is
/// the balancer's, `faults` reach every instance, `kill9(instance:)` takes one down.
///
/// Under `VAULT_TEST_DEPLOYMENT=balanced` every server a test asks for as one embedded instance
/// is such a deployment instead, with its content in a fresh bucket of a SeaweedFS S3 store too
/// (`Deployment`): the client suites run unchanged against the distributed mode (issue 22).
final class ServerHarness: @unchecked Sendable {
    private(set) var dataDir: URL
    let logFile: URL
    /// `--metadata` of every instance (nil: the embedded `DATA/meta.db`).
    private(set) var metadata: String?
    /// `--content` of every instance (nil: the data folder).
    private(set) var content: String?
    /// The processes' own ports (one entry per instance).
    private(set) var instancePorts: [UInt16] = []
    private var processes: [Process?] = []
    private(set) var balancer: Balancer?
    let user = "alice"
    let password = "server pass 1"
    let passwordFile: URL
    /// Where clients connect: the balancer, else the one instance.
    var port: UInt16 { balancer?.port ?? instancePorts[0] }
    private var cachedToken: String?

    /// With TLS: the self-signed certificate (also the CA to trust) and its public-key pin.
    private(set) var certFile: URL?
    private(set) var pin: String?

    var url: String { "\(certFile == nil ? "http" : "https")://127.0.0.1:\(port)" }
    static var binary: String { CLIHarness.productsDirectory.appendingPathComponent("vault-server").path }

    init(root: URL, args: [String] = [], tls: Bool = false, instances: Int = 1, metadata: String? = nil,
         content: String? = nil) throws {
        var instances = instances, metadata = metadata, content = content
        if Deployment.balanced && instances == 1 && metadata == nil && content == nil {
            (instances, metadata, content) = try Deployment.stores()
        }
        precondition(instances == 1 || metadata != nil, "several instances share a PostgreSQL database")
        var args = args
        self.metadata = metadata
        self.content = content
        if tls {
            let cert = root.appendingPathComponent("cert.pem"), key = root.appendingPathComponent("key.pem")
            try Self.sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout '\(key.path)'"
                        + " -out '\(cert.path)' -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1")
            pin = "sha256//" + (try Self.sh("openssl x509 -in '\(cert.path)' -pubkey -noout | openssl pkey -pubin -outform der"
                                            + " | openssl dgst -sha256 -binary | base64")).trimmingCharacters(in: .whitespacesAndNewlines)
            certFile = cert
            if instances == 1 { args += ["--tls-cert", cert.path, "--tls-key", key.path] }
        }
        dataDir = root.appendingPathComponent("server-data")
        logFile = root.appendingPathComponent("server.log")
        passwordFile = root.appendingPathComponent("server.pw")
        try Data((password + "\n").utf8).write(to: passwordFile)
        let add = Process()
        add.executableURL = URL(fileURLWithPath: Self.binary)
        add.arguments = ["user", "add", user, "--data", dataDir.path, "--password-file", passwordFile.path] + Self.storeArgs(metadata, content)
        add.standardOutput = FileHandle.nullDevice
        add.standardError = FileHandle.nullDevice
        try add.run(); add.waitUntilExit()
        guard add.terminationStatus == 0 else { throw TransferTestError("vault-server user add failed") }

        self.args = args + (instances > 1 ? ["--trusted-proxy", "127.0.0.1"] : [])
        decoder = ServerDecoder(home: root.appendingPathComponent("vault"))   // a CLIHarness's vault under the same root
        processes = Array(repeating: nil, count: instances)
        instancePorts = Array(repeating: 0, count: instances)
        for i in 0..<instances { try startInstance(i) }
        if instances > 1 {
            // A deployment terminates TLS at its balancer, which reaches the instances over plain HTTP.
            let pem = try certFile.map { cert -> URL in
                let both = root.appendingPathComponent("balancer.pem")
                try (try Data(contentsOf: cert) + Data(contentsOf: root.appendingPathComponent("key.pem"))).write(to: both)
                return both
            }
            balancer = try Balancer(root: root.appendingPathComponent("balancer"), backends: instancePorts, tls: pem)
        }
    }

    private let args: [String]

    /// The request log of instance `i` (one file per process: they append at once).
    func logFile(_ i: Int) -> URL {
        i == 0 ? logFile : logFile.deletingLastPathComponent().appendingPathComponent("server-\(i).log")
    }

    /// Starts instance `i` on its port (the first time: any free port) and waits for its
    /// `listening on` line.
    func startInstance(_ i: Int) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["serve", "--data", dataDir.path, "--listen", "127.0.0.1:\(instancePorts[i])", "--test-faults",
                       "--instance", "vault\(i)"] + storeArgs + args
        let out = Pipe()
        p.standardOutput = out
        let file = logFile(i)
        if !FileManager.default.fileExists(atPath: file.path) { FileManager.default.createFile(atPath: file.path, contents: nil) }
        let log = try FileHandle(forWritingTo: file)
        log.seekToEndOfFile()
        p.standardError = log
        try p.run()
        processes[i] = p
        let (listening, line) = listeningPort(from: out.fileHandleForReading)
        guard let port = listening else { throw TransferTestError("vault-server did not start: \(line)") }
        instancePorts[i] = port
    }

    /// `--metadata URL` and `--content URL` of the stores, or nothing for the embedded ones
    /// (every admin command takes both).
    var storeArgs: [String] { Self.storeArgs(metadata, content) }

    static func storeArgs(_ metadata: String?, _ content: String?) -> [String] {
        (metadata.map { ["--metadata", $0] } ?? []) + (content.map { ["--content", $0] } ?? [])
    }

    /// Moves the whole store the way an operator would: every instance stopped, `vault-server
    /// export` of this store, `import` into `metadata` (nil: the embedded SQLite file) with the
    /// data folder `dataDir`, the instances started again on the same ports.
    func move(toMetadata metadata: String?, dataDir newDir: URL) throws {
        try stopped {
            try copyStore(into: newDir, Self.storeArgs(metadata, content))
            self.metadata = metadata
            dataDir = newDir
        }
    }

    /// `vault-server export` of this store (instances stopped), `import` of it into the data
    /// folder `newDir` with the stores of `storeArgs`.
    func copyStore(into newDir: URL, _ storeArgs: [String]) throws {
        let bundle = dataDir.deletingLastPathComponent().appendingPathComponent("export-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: bundle) }
        let export = try toolOutput(Self.binary, ["export", "--data", dataDir.path, "--out", bundle] + self.storeArgs)
        guard export.status == 0 else { throw TransferTestError("export failed: \(export.output)") }
        let imported = try toolOutput(Self.binary, ["import", "--data", newDir.path, "--from", bundle] + storeArgs)
        guard imported.status == 0 else { throw TransferTestError("import failed: \(imported.output)") }
    }

    /// `kill -9` of instance `i` (no shutdown at all).
    func kill9(instance i: Int) {
        guard let p = processes[i] else { return }
        processes[i] = nil
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    /// Whether instance `i` runs.
    func isRunning(_ i: Int) -> Bool { processes[i]?.isRunning == true }

    /// Runs `body` with every instance stopped (SIGTERM), then starts them again on their ports.
    func stopped(_ body: () throws -> Void) throws {
        stopAll(kill: false)
        try body()
        for i in processes.indices { try startInstance(i) }
    }

    /// Every instance stopped (SIGKILL, or SIGTERM when `kill` is false).
    private func stopAll(kill: Bool) {
        for (i, p) in processes.enumerated() {
            guard let p else { continue }
            if kill { Glibc.kill(p.processIdentifier, SIGKILL) } else if p.isRunning { p.terminate() }
            p.waitUntilExit()
            processes[i] = nil
        }
    }

    /// Stops the server and starts it again on the same port with a new token-signing key, so
    /// every token issued so far answers 401.
    func restartWithNewSigningKey() throws {
        stopAll(kill: false)
        try FileManager.default.removeItem(at: dataDir.appendingPathComponent("jwt.secret"))
        cachedToken = nil
        for i in processes.indices { try startInstance(i) }
    }

    /// Stops the server (SIGKILL, or SIGTERM when `kill` is false) and starts it again on the
    /// same port with the same data; fault switches are back to off.
    func restart(kill: Bool) throws {
        stopAll(kill: kill)
        for i in processes.indices { try startInstance(i) }
    }

    deinit {
        keepLogs()
        balancer?.stop()
        stopAll(kill: false)
    }

    /// Under `VAULT_TEST_KEEP_SERVER_LOGS=DIR`: each instance's log copied into DIR (a run to
    /// look into), with a line saying whether it was still running or how it ended.
    private func keepLogs() {
        guard let dir = ProcessInfo.processInfo.environment["VAULT_TEST_KEEP_SERVER_LOGS"] else { return }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (i, p) in processes.enumerated() {
            let state = p.map { $0.isRunning ? "running" : "ended: \($0.terminationReason == .uncaughtSignal ? "signal" : "exit") \($0.terminationStatus)" } ?? "stopped"
            let name = "\(dir)/\(logFile.deletingLastPathComponent().lastPathComponent)-\(i).log"
            let text = "instance \(i): \(state)\n" + log(instance: i)
            FileManager.default.createFile(atPath: name, contents: Data(text.utf8))
        }
    }

    /// The server's request log (one JSON line per request; no tokens): every instance's.
    var log: String { processes.indices.map { log(instance: $0) }.joined() }

    /// Instance `i`'s request log.
    func log(instance i: Int) -> String { (try? String(contentsOf: logFile(i), encoding: .utf8)) ?? "" }

    /// Log lines of chunk uploads answered with `status`.
    func chunkLines(status: Int) -> [String] {
        log.split(separator: "\n").map(String.init).filter { $0.contains("/chunk") && $0.contains("\"status\":\(status)") }
    }

    /// Upload session ids seen in the log.
    var uploadIds: [String] {
        var ids: [String] = []
        for line in log.split(separator: "\n") {
            guard let r = line.range(of: "/v1/upload/") else { continue }
            let id = String(line[r.upperBound...].prefix { $0 != "/" && $0 != "\"" })
            if !id.isEmpty && !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    // MARK: - API through curl

    struct Answer {
        var status: Int
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    func curl(_ method: String, _ path: String, json: String? = nil, auth: Bool = true, headers: [String: String] = [:],
              instance: Int? = nil) throws -> Answer {
        // Instances behind a balancer speak plain HTTP; a lone one TLS when it has a certificate.
        let base = instance.map { "\(certFile != nil && balancer == nil ? "https" : "http")://127.0.0.1:\(instancePorts[$0])" } ?? url
        var args = ["-s", "-X", method, "-o", "-", "-w", "\n%{http_code}", base + path]
        if let certFile { args += ["--cacert", certFile.path] }
        if auth { args += ["-H", "Authorization: Bearer \(try token())"] }
        for (k, v) in headers { args += ["-H", "\(k): \(v)"] }
        if let json { args += ["-H", "Content-Type: application/json", "--data-binary", json] }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        var data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard let nl = data.lastIndex(of: 10) else { throw TransferTestError("curl gave no status") }
        let status = Int(String(decoding: data[(nl + 1)...], as: UTF8.self)) ?? 0
        data = data[..<nl]
        return Answer(status: status, body: Data(data))
    }

    func token() throws -> String {
        if let cachedToken { return cachedToken }
        let a = try curl("POST", "/v1/auth/token", json: #"{"username":"\#(user)","password":"\#(password)"}"#, auth: false)
        guard a.status == 200, let t = a.json["token"] as? String else { throw TransferTestError("token: \(a.status)") }
        cachedToken = t
        return t
    }

    /// Sets the fault switches of every running instance.
    func faults(_ json: String) throws {
        for i in processes.indices where isRunning(i) {
            let a = try curl("POST", "/v1/test/faults", json: json, auth: false, instance: i)
            guard a.status == 200 else { throw TransferTestError("faults: \(a.status)") }
        }
    }

    /// Decodes what the server stores (set by the first `CLIHarness.login(to:)`): names, sizes
    /// and checksums are the vault's, read through its codec (the server holds only ciphertext).
    var decoder: ServerDecoder?

    /// The live children of a folder, by name (decoded through `decoder`: `size` and `sha256`
    /// are the plaintext's; the server's own are `storedSize`, `storedSHA256`).
    func children(_ parentId: String = "root") throws -> [String: [String: Any]] {
        let a = try curl("GET", "/v1/files?parentId=\(parentId)&pageSize=1000")
        var out: [String: [String: Any]] = [:]
        let codec = try decoder?.codecIfAny()
        for f in a.json["files"] as? [[String: Any]] ?? [] {
            let d = try codec.map { try decoder!.decode(f, codec: $0) } ?? f
            out[d["name"] as? String ?? ""] = d
        }
        return out
    }

    /// SHA-256 (hex) of what the server serves for a file: of the plaintext, decrypted and
    /// authenticated through `decoder` (of the raw bytes without one).
    func contentSHA256(_ id: String) throws -> String {
        let a = try curl("GET", "/v1/files/\(id)/content")
        guard let decoder, try decoder.codecIfAny() != nil else { return sha256Hex(a.body) }
        let f = try curl("GET", "/v1/files/\(id)")
        return try decoder.plaintextSHA256(of: a.body, contentMeta: f.json["contentMeta"] as? String ?? "", id: id)
    }
}

extension ServerHarness {
    /// `/bin/sh -c command`'s output (VaultTestSupport's `shell`).
    @discardableResult
    static func sh(_ command: String) throws -> String { try shell(command) }
}

struct TransferTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// SHA-256 hex of `data` via the system's `sha256sum` (independent of the vault's own code).
func sha256Hex(_ data: Data) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    let input = Pipe(), out = Pipe()
    p.standardInput = input
    p.standardOutput = out
    try? p.run()
    let writer = DispatchQueue(label: "sha-in")
    writer.async { input.fileHandleForWriting.write(data); try? input.fileHandleForWriting.close() }
    let result = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(String(decoding: result, as: UTF8.self).prefix(64))
}

extension CLIHarness {
    /// A keyring-less vault (in `vaultHome` when given) with fast retries, logged in to a fresh
    /// plain-HTTP reference server in its root: the start of most sync tests.
    static func loggedIn(vaultHome: URL? = nil) throws -> (CLIHarness, ServerHarness) {
        let h = try CLIHarness(keyring: false)
        if let vaultHome { h.env["VAULT_HOME"] = vaultHome.path }
        h.useFastRetry()
        try h.initVault()
        let server = try ServerHarness(root: h.root, args: [], tls: false)
        try h.login(to: server)
        return (h, server)
    }
}
