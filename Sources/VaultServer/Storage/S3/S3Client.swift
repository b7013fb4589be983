import Foundation
import VaultHTTP
import VaultPrimitives

/// Where an S3 bucket is (`--content s3://BUCKET?endpoint=…&region=…&credentials=FILE`) and the
/// credentials to sign with: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, or the `[default]`
/// profile of an AWS-style credentials file. `description` never shows the secret.
struct S3Location: Sendable, CustomStringConvertible {
    var bucket: String
    /// `http(s)://host:port`, requests are path-style (`endpoint/bucket/key`).
    var endpoint: String
    var region: String
    var credentials: AWSSigV4

    var description: String { "s3://\(bucket) at \(endpoint) (\(region))" }

    /// Whether `argument` names an S3 bucket rather than a folder.
    static func isS3(_ argument: String?) -> Bool { argument?.hasPrefix("s3://") == true }

    /// Parses an `s3://` URL; throws a sentence saying what to fix.
    init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(S3Error) {
        guard url.hasPrefix("s3://"), let parts = URLComponents(string: url), let host = parts.host, !host.isEmpty else {
            throw .configuration("--content must look like s3://BUCKET?endpoint=https://HOST&region=REGION")
        }
        guard host.range(of: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", options: .regularExpression) != nil else {
            throw .configuration("the bucket name \(host) is not a valid S3 bucket name (3–63 of a-z 0-9 . -)")
        }
        var query: [String: String] = [:]
        for item in parts.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let region = query["region"] ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        let endpoint = query["endpoint"] ?? "https://s3.\(region).amazonaws.com"
        guard endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
            throw .configuration("the endpoint of --content must be an http:// or https:// URL")
        }
        var key = environment["AWS_ACCESS_KEY_ID"], secret = environment["AWS_SECRET_ACCESS_KEY"]
        if let file = query["credentials"] ?? environment["AWS_SHARED_CREDENTIALS_FILE"], key == nil || secret == nil {
            (key, secret) = try Self.readCredentials(file)
        }
        guard let key, let secret, !key.isEmpty, !secret.isEmpty else {
            throw .configuration("the object store needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add &credentials=FILE (an AWS credentials file) to --content")
        }
        self.bucket = host
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.region = region
        self.credentials = AWSSigV4(accessKeyId: key, secretAccessKey: secret, region: region)
    }

    /// The `aws_access_key_id` and `aws_secret_access_key` of the `[default]` profile (or of the
    /// file's only keys) of an AWS credentials file.
    static func readCredentials(_ path: String) throws(S3Error) -> (String?, String?) {
        guard let bytes = try? FileSystem.readAll(path) else {
            throw .configuration("cannot read the credentials file \(path)")
        }
        var key: String?, secret: String?, section = "default"
        for raw in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") { section = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] ")); continue }
            guard section == "default" else { continue }
            let kv = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard kv.count == 2 else { continue }
            if kv[0] == "aws_access_key_id" { key = kv[1] }
            if kv[0] == "aws_secret_access_key" { secret = kv[1] }
        }
        return (key, secret)
    }
}

/// Why an object store operation failed. `unavailable` (the store did not answer, or answered
/// 5xx) becomes a 503 for the client; the rest are the store refusing.
enum S3Error: Error, CustomStringConvertible {
    case configuration(String)
    case unavailable(String)
    case notFound(String)
    case refused(status: Int, code: String, what: String)

    var description: String {
        switch self {
        case .configuration(let m): return m
        case .unavailable(let m): return "the object store is unreachable: \(m)"
        case .notFound(let what): return "the object store has no \(what)"
        case .refused(let status, let code, let what):
            let hint = status == 403 ? " (check the credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or &credentials=FILE, and that they may use the bucket)"
                : code == "NoSuchBucket" ? " (create it: vault-server migrate --content …)" : ""
            return "the object store refused \(what): \(status) \(code)\(hint)"
        }
    }
}

/// A minimal S3 client over libcurl (`VaultHTTP`, signed by `CURLOPT_AWS_SIGV4`, payloads
/// `UNSIGNED-PAYLOAD`): the object, multipart and listing calls the content store needs. Any
/// number of threads may use it (a pool of `HTTPClient`s, one per transfer).
final class S3Client: @unchecked Sendable {
    // SAFETY: `idle` is behind its lock; a client taken out is used by one thread only.
    let location: S3Location
    private let idle = Locked([HTTPClient]())
    private let configuration: HTTPClientConfiguration

    /// `connectTimeout`, `stallTime`: seconds to connect, and without a byte moving, before a
    /// request fails as `.unavailable`.
    init(_ location: S3Location, connectTimeout: TimeInterval = 5, stallTime: TimeInterval = 60) {
        self.location = location
        var c = HTTPClientConfiguration(connectTimeout: connectTimeout, lowSpeedLimit: 1, lowSpeedTime: stallTime,
                                        userAgent: "vault-server", preferHTTP2: false)
        c.awsSigV4 = location.credentials
        let host = URLComponents(string: location.endpoint)?.host ?? ""
        c.bypassProxy = host == "127.0.0.1" || host == "localhost" || host == "::1"
        configuration = c
    }

    /// The URL of `key` (empty: the bucket) with a query already in S3's canonical form (sorted,
    /// encoded), which libcurl 7.88 signs as given.
    func url(_ key: String, _ query: [(String, String)] = []) -> String {
        var u = location.endpoint + "/" + location.bucket
        if !key.isEmpty { u += "/" + key.split(separator: "/", omittingEmptySubsequences: false).map { Self.encode(String($0)) }.joined(separator: "/") }
        if !query.isEmpty {
            u += "?" + query.sorted { $0.0 < $1.0 }.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
        }
        return u
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters (SigV4's rule).
    static func encode(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            if (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || "-._~".utf8.contains(b) {
                out.append(Character(UnicodeScalar(b)))
            } else {
                out += String(format: "%%%02X", b)
            }
        }
        return out
    }

    /// Sends one request on a pooled client; transport failures are `.unavailable`.
    func send(_ method: HTTPMethod, _ key: String, query: [(String, String)] = [], headers: [(String, String)] = [],
              body: HTTPBody = .none, onBody: ((UnsafeRawBufferPointer) throws -> Bool)? = nil) throws -> VaultHTTP.HTTPResponse {
        let client = try idle.withLock { $0.popLast() } ?? HTTPClient(configuration: configuration)
        defer { idle.withLock { if $0.count < 16 { $0.append(client) } } }
        let request = VaultHTTP.HTTPRequest(method: method, url: url(key, query),
                                            headers: headers + [("x-amz-content-sha256", "UNSIGNED-PAYLOAD")], body: body)
        do {
            if let onBody {
                var errorBody: [UInt8] = []
                var status = 0
                var head = try client.send(request, onHead: { status = $0.status }, onBody: { piece in
                    if status >= 300 { errorBody += piece; return errorBody.count < 1 << 16 }
                    return try onBody(piece)
                })
                head.body = errorBody
                return head
            }
            return try client.send(request, collectUpTo: 16 << 20)
        } catch let e as HTTPError {
            throw S3Error.unavailable("\(e)")
        }
    }

    /// Throws the store's refusal unless `response` is 2xx (5xx and 503 SlowDown are `.unavailable`).
    @discardableResult
    func check(_ response: VaultHTTP.HTTPResponse, _ what: String) throws -> VaultHTTP.HTTPResponse {
        guard !(200..<300).contains(response.status) else { return response }
        let code = S3XML.values("Code", in: response.body).first ?? ""
        if response.status >= 500 { throw S3Error.unavailable("\(response.status) \(code) for \(what)") }
        if response.status == 404 && code != "NoSuchBucket" { throw S3Error.notFound(what) }
        throw S3Error.refused(status: response.status, code: code, what: what)
    }

    // MARK: - Buckets and objects

    /// Creates the bucket; one that exists already and is ours is fine.
    func createBucket() throws {
        // Outside us-east-1, S3 wants the region named in the body.
        let body: HTTPBody = location.region == "us-east-1" ? .none : .bytes(Array(
            "<CreateBucketConfiguration><LocationConstraint>\(S3XML.escape(location.region))</LocationConstraint></CreateBucketConfiguration>".utf8))
        let r = try send(.put, "", headers: [("Content-Type", "application/xml")], body: body)
        if r.status == 409, S3XML.values("Code", in: r.body).first == "BucketAlreadyOwnedByYou" { return }
        try check(r, "creating bucket \(location.bucket)")
    }

    /// Whether the bucket exists and these credentials reach it.
    func bucketExists() throws -> Bool {
        let r = try send(.head, "")
        if r.status == 404 { return false }
        try check(r, "bucket \(location.bucket)")
        return true
    }

    /// Uploads `length` bytes of `file` from `offset` as object `key`.
    func put(_ key: String, file: POSIXFile, offset: Int64 = 0, length: Int64) throws {
        try check(try send(.put, key, body: Self.body(file, offset: offset, length: length)), "storing \(key)")
    }

    /// Stores `length` bytes pulled from `read` as object `key`.
    func put(_ key: String, length: Int64, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        try check(try send(.put, key, body: .stream(length: length, read: read)), "storing \(key)")
    }

    /// Stores `bytes` as object `key`.
    func put(_ key: String, bytes: [UInt8]) throws {
        try check(try send(.put, key, body: .bytes(bytes)), "storing \(key)")
    }

    /// Server-side copy of object `from` to `to` (single request: up to 5 GB).
    func copy(_ from: String, to: String) throws {
        let r = try check(try send(.put, to, headers: [("x-amz-copy-source", "/\(location.bucket)/\(from)")]), "copying \(from)")
        // A copy can fail after the 200 has been sent: the error is then in the body.
        if S3XML.values("Code", in: r.body).first != nil { throw S3Error.unavailable("copying \(from) failed midway") }
    }

    /// Bytes `offset ..< offset + length` of object `key`, delivered in pieces to `onBody`.
    func get(_ key: String, offset: Int64, length: Int64, onBody: @escaping (UnsafeRawBufferPointer) throws -> Bool) throws {
        guard length > 0 else { return }
        let r = try send(.get, key, headers: [("Range", "bytes=\(offset)-\(offset + length - 1)")], onBody: onBody)
        try check(r, "object \(key)")
    }

    /// The size of object `key`, nil when there is none.
    func size(_ key: String) throws -> Int64? {
        let r = try send(.head, key)
        if r.status == 404 { return nil }
        try check(r, "object \(key)")
        return r.header("Content-Length").flatMap { Int64($0) }
    }

    /// Deletes object `key` (absent is fine).
    func delete(_ key: String) throws {
        let r = try send(.delete, key)
        if r.status == 404 { return }
        try check(r, "deleting \(key)")
    }

    // MARK: - Multipart uploads

    /// Starts a multipart upload of `key`; returns its UploadId.
    func createMultipartUpload(_ key: String) throws -> String {
        let r = try check(try send(.post, key, query: [("uploads", "")], headers: [("Content-Type", "application/octet-stream")]),
                          "starting a multipart upload of \(key)")
        guard let id = S3XML.values("UploadId", in: r.body).first, !id.isEmpty else {
            throw S3Error.unavailable("no UploadId in the answer to CreateMultipartUpload")
        }
        return id
    }

    /// Uploads part `number` (1…10,000) from `length` bytes of `file`; returns its ETag.
    func uploadPart(_ key: String, uploadId: String, number: Int, file: POSIXFile, length: Int64) throws -> String {
        let r = try check(try send(.put, key, query: [("partNumber", String(number)), ("uploadId", uploadId)],
                                   body: Self.body(file, offset: 0, length: length)), "part \(number) of \(key)")
        guard let etag = r.header("ETag"), !etag.isEmpty else { throw S3Error.unavailable("no ETag for part \(number)") }
        return etag
    }

    /// Completes a multipart upload from its parts (number, ETag) in order.
    func completeMultipartUpload(_ key: String, uploadId: String, parts: [(Int, String)]) throws {
        var xml = "<CompleteMultipartUpload>"
        for (n, etag) in parts { xml += "<Part><PartNumber>\(n)</PartNumber><ETag>\(S3XML.escape(etag))</ETag></Part>" }
        xml += "</CompleteMultipartUpload>"
        let r = try send(.post, key, query: [("uploadId", uploadId)], headers: [("Content-Type", "application/xml")],
                         body: .bytes(Array(xml.utf8)))
        try check(r, "completing the upload of \(key)")
        if let code = S3XML.values("Code", in: r.body).first {
            if code == "NoSuchUpload" { throw S3Error.notFound("multipart upload \(uploadId)") }
            throw S3Error.refused(status: 200, code: code, what: "completing the upload of \(key)")
        }
    }

    /// Aborts a multipart upload (one already gone is fine).
    func abortMultipartUpload(_ key: String, uploadId: String) throws {
        let r = try send(.delete, key, query: [("uploadId", uploadId)])
        if r.status == 404 { return }
        try check(r, "aborting the upload of \(key)")
    }

    // MARK: - Listings (the sweeper's candidates only; never the truth)

    /// Every object under `prefix`: key and last-modified time.
    func listObjects(prefix: String) throws -> [(key: String, modified: Date?)] {
        var out: [(String, Date?)] = [], token: String?
        repeat {
            var q = [("list-type", "2"), ("prefix", prefix)]
            if let token { q.append(("continuation-token", token)) }
            let r = try check(try send(.get, "", query: q), "listing \(prefix)")
            for block in S3XML.blocks("Contents", in: r.body) {
                guard let key = S3XML.values("Key", in: block).first else { continue }
                out.append((key, S3XML.values("LastModified", in: block).first.flatMap(S3XML.date)))
            }
            let truncated = S3XML.values("IsTruncated", in: r.body).first == "true"
            token = truncated ? S3XML.values("NextContinuationToken", in: r.body).first : nil
        } while token != nil
        return out
    }

    /// Every multipart upload in progress: key, UploadId and when it started.
    func listMultipartUploads() throws -> [(key: String, uploadId: String, initiated: Date?)] {
        var out: [(String, String, Date?)] = []
        var marker: (key: String, id: String)?
        repeat {
            var q = [("uploads", "")]
            if let marker { q += [("key-marker", marker.key), ("upload-id-marker", marker.id)] }
            let r = try check(try send(.get, "", query: q), "listing multipart uploads")
            for block in S3XML.blocks("Upload", in: r.body) {
                guard let key = S3XML.values("Key", in: block).first, let id = S3XML.values("UploadId", in: block).first else { continue }
                out.append((key, id, S3XML.values("Initiated", in: block).first.flatMap(S3XML.date)))
            }
            let truncated = S3XML.values("IsTruncated", in: r.body).first == "true"
            if truncated, let k = S3XML.values("NextKeyMarker", in: r.body).first, let i = S3XML.values("NextUploadIdMarker", in: r.body).first,
               (k, i) != (marker?.key ?? "", marker?.id ?? "") {
                marker = (k, i)
            } else {
                marker = nil
            }
        } while marker != nil
        return out
    }

    /// A request body streaming `length` bytes of `file` from `offset`.
    static func body(_ file: POSIXFile, offset: Int64, length: Int64) -> HTTPBody {
        var at = offset
        let end = offset + length
        return .stream(length: length) { buffer in
            guard at < end else { return 0 }
            let want = Int(min(Int64(buffer.count), end - at))
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: at)
            guard n > 0 else { throw FileSystemError(operation: "read (file shorter than expected)", path: file.path, errno: .ioError) }
            at += Int64(n)
            return n
        }
    }
}

/// The few XML reads the S3 answers need: element texts by name, and repeated element blocks.
enum S3XML {
    static func blocks(_ name: String, in body: [UInt8]) -> [[UInt8]] {
        let text = String(decoding: body, as: UTF8.self)
        var out: [[UInt8]] = [], rest = text[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest.range(of: "</\(name)>", range: open.upperBound..<rest.endIndex) {
            out.append(Array(rest[open.upperBound..<close.lowerBound].utf8))
            rest = rest[close.upperBound...]
        }
        return out
    }

    static func values(_ name: String, in body: [UInt8]) -> [String] {
        blocks(name, in: body).map { unescape(String(decoding: $0, as: UTF8.self)) }
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#34;", with: "\"")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func date(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: s)
    }
}
