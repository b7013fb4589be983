import Foundation
import VaultPostgres
import VaultSQL
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A real `vault-server` process on 127.0.0.1 with its own temp data folder. With
/// `VAULT_TEST_METADATA=postgresql` its metadata lives in a fresh database of the test process's
/// PostgreSQL (`PostgresCluster.shared()`, `--metadata postgresql://…`) instead of `DATA/meta.db`;
/// with `VAULT_TEST_CONTENT=s3` its content lives in a fresh bucket of the test process's
/// SeaweedFS (`SeaweedS3.shared()`, `--content s3://…`) instead of `DATA/content`.
final class ServerProcess: @unchecked Sendable {
    let dataDir: String
    let extraArgs: [String]
    /// The `--metadata` URL of its PostgreSQL database; nil: the embedded SQLite file.
    let metadata: String?
    /// The `--content` URL of its S3 bucket; nil: the data folder.
    let content: String?
    private(set) var process: Process?
    private(set) var port: UInt16 = 0
    private var stderrPath: String
    var client: HTTPTestClient { HTTPTestClient(port: port) }

    /// The built binary: `VAULT_SERVER_BIN`, else next to the test bundle (`<scratch>/debug`).
    static var binary: String {
        if let env = ProcessInfo.processInfo.environment["VAULT_SERVER_BIN"] { return env }
        var dir = URL(fileURLWithPath: Bundle.main.bundlePath)
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("vault-server").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir.deleteLastPathComponent()
        }
        for b in Bundle.allBundles {
            let candidate = b.bundleURL.deletingLastPathComponent().appendingPathComponent("vault-server").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for scratch in [".build-server", ".build"] {
            let candidate = fromSource.appendingPathComponent("\(scratch)/debug/vault-server").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "vault-server"
    }

    /// Whether `VAULT_TEST_METADATA` asks for PostgreSQL (`postgresql`); anything else is SQLite.
    static var usesPostgres: Bool { ProcessInfo.processInfo.environment["VAULT_TEST_METADATA"] == "postgresql" }

    /// The `--metadata` of a new server: a fresh PostgreSQL database under `VAULT_TEST_METADATA=postgresql`.
    static func defaultMetadata() throws -> String? {
        guard usesPostgres else { return nil }
        try XCTSkipUnless(PostgresCluster.available, PostgresCluster.unavailableMessage)
        return try PostgresCluster.shared().makeDatabase()
    }

    /// Whether `VAULT_TEST_CONTENT` asks for an S3 object store (`s3`); anything else is the data folder.
    static var usesS3: Bool { ProcessInfo.processInfo.environment["VAULT_TEST_CONTENT"] == "s3" }

    /// The `--content` of a new server: a fresh bucket under `VAULT_TEST_CONTENT=s3`.
    static func defaultContent() throws -> String? {
        guard usesS3 else { return nil }
        try XCTSkipUnless(SeaweedS3.available, SeaweedS3.unavailableMessage)
        return try SeaweedS3.shared().makeBucket()
    }

    /// The bucket of `content` (nil for the data folder).
    var bucket: String? { content.flatMap { URLComponents(string: $0)?.host } }

    /// `metadata`: the `--metadata` URL (another server's, to share its database); by default
    /// `defaultMetadata()`.
    /// `content`: likewise the `--content` URL; by default `defaultContent()`.
    init(args: [String] = [], users: [String] = ["alice", "bob"], metadata: String?? = .none, content: String?? = .none) throws {
        dataDir = NSTemporaryDirectory() + "vault-server-test-" + UUID().uuidString
        self.metadata = try metadata ?? Self.defaultMetadata()
        self.content = try content ?? Self.defaultContent()
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        stderrPath = dataDir + ".log"
        extraArgs = args
        for u in users { try addUser(u) }
        try start()
    }

    deinit {
        stop()
        // VAULT_TEST_KEEP_LOGS=DIR keeps each server's log there (a failure's server side).
        if let keep = ProcessInfo.processInfo.environment["VAULT_TEST_KEEP_LOGS"] {
            try? FileManager.default.copyItem(atPath: stderrPath, toPath: keep + "/" + URL(fileURLWithPath: stderrPath).lastPathComponent)
        }
        try? FileManager.default.removeItem(atPath: dataDir)
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    /// `vault-server user add NAME` with password "pw-NAME".
    func addUser(_ name: String) throws {
        let pwFile = dataDir + ".pw"
        try Data("pw-\(name)\n".utf8).write(to: URL(fileURLWithPath: pwFile))
        defer { try? FileManager.default.removeItem(atPath: pwFile) }
        let (code, _) = try Self.run(["user", "add", name, "--data", dataDir + "/d", "--password-file", pwFile] + metadataArgs)
        guard code == 0 else { throw TestHTTPError(description: "user add \(name) failed") }
    }

    /// A connection of the test's own to the server's metadata (`DATA/meta.db` or its PostgreSQL
    /// database), for a test that looks at or changes rows behind the server's back.
    func metadataConnection() throws -> any SQLConnection {
        if let metadata { return try PostgresConnection(url: metadata) }
        return try SQLDatabase(path: dataDir + "/d/meta.db")
    }

    /// Where the server's stores are: `--metadata URL` when it keeps its metadata in PostgreSQL,
    /// `--content URL` when its content is in S3 (every admin command takes both).
    var metadataArgs: [String] { (metadata.map { ["--metadata", $0] } ?? []) + (content.map { ["--content", $0] } ?? []) }

    /// How many revision contents the server stores: files of `DATA/content`, or objects under
    /// `content/` of its bucket.
    func storedRevisionCount() throws -> Int {
        if let bucket { return try SeaweedS3.shared().objectKeys(bucket: bucket, prefix: "content/").count }
        return FileManager.default.enumerator(atPath: dataDir + "/d/content")?.allObjects.count ?? 0
    }

    /// Whether anything of upload session `id` is stored: its part file, or its objects and
    /// multipart uploads in the bucket.
    func hasUploadData(_ id: String) throws -> Bool {
        guard let bucket else { return FileManager.default.fileExists(atPath: dataDir + "/d/uploads/\(id).part") }
        let store = try SeaweedS3.shared()
        return try !store.objectKeys(bucket: bucket, prefix: "uploads/\(id)/").isEmpty
    }

    /// Runs the binary to completion; returns the exit code and stdout.
    @discardableResult
    static func run(_ args: [String], stdin: String? = nil) throws -> (Int32, String) {
        let r = try runCapturing(args, stdin: stdin)
        return (r.code, r.stdout)
    }

    /// Runs the binary to completion; returns the exit code, stdout and stderr. Standard input is
    /// `stdin` through a pipe (never a terminal), else inherited.
    static func runCapturing(_ args: [String], stdin: String? = nil) throws -> (code: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        if let stdin {
            let inPipe = Pipe(); p.standardInput = inPipe
            try p.run()
            inPipe.fileHandleForWriting.write(Data(stdin.utf8)); try inPipe.fileHandleForWriting.close()
        } else {
            try p.run()
        }
        // stderr is read on another thread so that neither pipe can fill up and block the child.
        let errData = Locked(Data()), errDone = DispatchSemaphore(value: 0)
        Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() }; errDone.signal() }.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        errDone.wait()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }

    /// Starts `serve` and waits for its `listening on` line.
    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["serve", "--data", dataDir + "/d", "--listen", "127.0.0.1:0"] + metadataArgs + extraArgs
        let out = Pipe()
        p.standardOutput = out
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: stderrPath)
        try p.run()
        process = p
        let (listening, line) = listeningPort(from: out.fileHandleForReading)
        guard let port = listening else { throw TestHTTPError(description: "server did not start: \(line) \(log)") }
        self.port = port
    }

    /// SIGTERM and wait (graceful); returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let p = process else { return 0 }
        process = nil
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// `kill -9`, no shutdown at all.
    func kill9() {
        guard let p = process else { return }
        process = nil
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    /// The one-shot upload temps left in `DATA/tmp/` (files only: each instance has a folder there).
    var tempFiles: [String] {
        let root = dataDir + "/d/tmp"
        return (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter {
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + $0, isDirectory: &isDir) && !isDir.boolValue
        }
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }
    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    // MARK: - API helpers

    func token(_ user: String, password: String? = nil) throws -> String {
        let r = try client.send("POST", "/v1/auth/token",
                                body: Array(#"{"username":"\#(user)","password":"\#(password ?? "pw-" + user)"}"#.utf8))
        guard r.status == 200, let t = r.json["token"] as? String else {
            throw TestHTTPError(description: "login \(user) failed: \(r.status) \(r.text)")
        }
        return t
    }
}

/// A logged-in user of a server, with JSON helpers.
struct APIUser: Sendable {
    let server: ServerProcess
    let token: String
    var device: String? = nil

    init(_ server: ServerProcess, _ name: String) throws {
        self.server = server
        token = try server.token(name)
    }

    /// A user of `server` by a token it already holds (one issued before a restart or a move).
    init(_ server: ServerProcess, token: String) {
        self.server = server
        self.token = token
    }

    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> TestResponse {
        var h = headers
        h["Authorization"] = "Bearer \(token)"
        if let device { h["X-Device-Id"] = device }
        return try server.client.send(method, path, headers: h, body: body)
    }

    func json(_ method: String, _ path: String, _ object: Any, headers: [String: String] = [:]) throws -> TestResponse {
        let body = try JSONSerialization.data(withJSONObject: object)
        return try send(method, path, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                        body: [UInt8](body))
    }

    /// Uploads `bytes` in one request as `name` under `parent`; returns the file JSON.
    @discardableResult
    func upload(_ name: String, _ bytes: [UInt8], parent: String = "root") throws -> [String: Any] {
        let r = try send("POST", "/v1/upload?uploadType=media&name=\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)&parentId=\(parent)", body: bytes)
        guard r.status == 201 else { throw TestHTTPError(description: "upload failed: \(r.status) \(r.text)") }
        return r.json
    }

    func mkdir(_ name: String, parent: String = "root") throws -> [String: Any] {
        let r = try json("POST", "/v1/files", ["name": name, "parentId": parent, "type": "folder"])
        guard r.status == 201 else { throw TestHTTPError(description: "mkdir failed: \(r.status) \(r.text)") }
        return r.json
    }
}

/// Lowercase hex SHA-256 via `sha256sum`-free Foundation-less code (the tests have no crypto lib).
func sha256Hex(_ bytes: [UInt8]) -> String {
    let path = NSTemporaryDirectory() + "sha-" + UUID().uuidString
    FileManager.default.createFile(atPath: path, contents: Data(bytes))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    p.arguments = [path]
    let out = Pipe(); p.standardOutput = out
    try? p.run()
    let d = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(String(decoding: d, as: UTF8.self).prefix(64))
}

/// `n` seeded random bytes for the test function that asks (`TestData`: its seed is printed).
func randomBytes(_ n: Int, file: String = #fileID, function: String = #function) -> [UInt8] {
    TestData.bytes(n, for: "\(file) \(function)")
}

extension ServerProcess {
    /// Fails the test unless the process is still running and answers an ordinary request.
    func assertStillServing(_ user: APIUser, _ context: @autoclosure () -> String = "",
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(process?.isRunning == true, "the server died after: \(context())\n\(log.suffix(2000))", file: file, line: line)
        XCTAssertEqual(try? user.send("GET", "/v1/changes/start").status, 200, "not serving after: \(context())",
                       file: file, line: line)
    }
}
