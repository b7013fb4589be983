import Foundation
import VaultAPI
import VaultSQL
import VaultPrimitives

/// The API's behaviour, independent of the HTTP library: route handlers live in extensions
/// (`VaultService+Files.swift`, `+Uploads`, `+Revisions`, `+Changes`, …).
final class VaultService: @unchecked Sendable {
    // SAFETY: every member is immutable or itself thread-safe (locks inside).
    let config: ServerConfig
    let store: MetadataStore
    let content: any ContentBackend
    let users: UserDirectory
    let signer: TokenSigner
    let hub: EventHub
    let logins: LoginThrottle
    /// Monotonic seconds, for keep-alives and login backoff.
    let clock: @Sendable () -> Double
    let faults = FaultInjector()
    /// Per-session lock and running hash (see `UploadProgress`).
    let uploadLocks = Locked([String: UploadProgress]())
    /// Chunks being received right now, `uploadId#index` (see `ChunkClaims`).
    let chunkClaims: ChunkClaims
    /// Live folders per account between listing pages (see `FolderLiveness`).
    let liveness = FolderLiveness()
    /// When the content store was last swept while serving (monotonic seconds).
    let lastContentSweep = Locked(0.0)

    init(config: ServerConfig, clock: @escaping @Sendable () -> Double = MonotonicClock.now) throws {
        self.config = config
        self.clock = clock
        hub = EventHub(perUserLimit: config.maxEventStreams, keepAlive: Double(config.keepAliveInterval))
        let stall = TimeInterval(config.chunkStallTimeout)
        // A short stall is waited out whole (plus a margin), so a waiter never gives up a hair before
        // the writer would have counted as stalled.
        chunkClaims = ChunkClaims(stallAfter: stall, graceWait: stall <= 2 ? stall + 0.25 : 2)
        content = try ContentLocation.open(config.content, dataDir: config.dataDir, instance: config.instanceId)
        store = try MetadataStore(config.metadataLocation, connections: config.metadataConnections)
        users = UserDirectory(store: store)
        logins = LoginThrottle(policy: config.loginThrottle, ledger: StoredLoginLedger(store: store))
        signer = try TokenSigner.loadOrCreate(path: config.jwtSecretFile ?? config.dataDir + "/jwt.secret")
    }

    /// The in-memory state of one upload session, created on first use.
    func uploadProgress(_ id: String) -> UploadProgress {
        uploadLocks.withLock { all in
            if let p = all[id] { return p }
            let p = UploadProgress(); all[id] = p; return p
        }
    }

    /// The user id behind an `Authorization: Bearer` header: a token of a removed user, or one
    /// issued before the user's tokens were revoked, is refused.
    func authenticate(_ request: HTTPRequest) throws -> String {
        guard let h = request.header("authorization"), h.lowercased().hasPrefix("bearer ") else {
            throw APIError.unauthorized()
        }
        let token = String(h.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let ahead = config.testFaults ? TimeInterval(faults.current.clockAheadSeconds ?? 0) : 0   // the test clock
        guard let claim = signer.verify(token, now: Date().addingTimeInterval(ahead)), try users.isCurrent(id: claim.userId, generation: claim.generation) else {
            throw APIError.unauthorized("the bearer token is invalid, expired or revoked")
        }
        return claim.userId
    }

    /// Records a change and wakes SSE streams (call inside the write transaction; the wake-up
    /// runs after commit via `notify`).
    func recordChange(_ db: any SQLConnection, owner: String, file: FileResource, kind: ChangeKind, deviceId: String?) throws -> Int64 {
        try db.recordChange(owner: owner, file: file, kind: kind, deviceId: deviceId, keep: config.changesKeep)
    }

    func notify(owner: String, cursor: Int64) { hub.publish(owner: owner, cursor: cursor) }
}

// MARK: - Request helpers

extension VaultService {
    /// Refuses a change of `file` unless `request`'s If-Match names its current version (428
    /// without one, 412 with the file's current state when it is another).
    func requireMatchingVersion(_ file: FileResource, _ request: HTTPRequest) throws {
        guard try requireIfMatch(request) == file.version else { throw APIError.stale(file) }
    }

    /// The `If-Match` version: 428 when missing, 400 when not a version.
    func requireIfMatch(_ request: HTTPRequest) throws -> Int64 {
        guard let raw = request.header("if-match") else { throw APIError.preconditionRequired }
        guard let v = Self.parseETag(raw) else {
            throw APIError.badRequest("If-Match must be a file version such as \"3\"")
        }
        return v
    }

    /// `"3"`, `W/"3"` or `3` → 3: a version is 1 to 18 digits without a leading zero
    /// (`versionPattern`, as `docs/openapi.yaml` documents `If-Match`); anything else is nil.
    static func parseETag(_ raw: String) -> Int64? {
        var s = Substring(raw)
        let weak = s.hasPrefix("W/")
        if weak { s = s.dropFirst(2) }
        if s.hasPrefix("\"") {
            guard s.count >= 2, s.hasSuffix("\"") else { return nil }
            s = s.dropFirst().dropLast()
        } else if weak {
            return nil
        }
        guard s.first != "0" else { return nil }
        return Digits.parse(s, maxDigits: 18)
    }

    /// The `If-Match` grammar (see `parseETag`).
    static let versionPattern = #"^(W/)?"[1-9][0-9]{0,17}"$|^[1-9][0-9]{0,17}$"#

    /// Decodes a JSON request body: 400 `invalid_json` for bad JSON, a wrong type, a missing
    /// field, a non-object body or an explicit `null`.
    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
        try Self.decodeBody(type, body)
    }

    static func decodeBody<T: Decodable>(_ type: T.Type, _ body: [UInt8], what: String = "the body") throws -> T {
        let value: T
        do { value = try APIJSON.decoder().decode(type, from: Data(body)) } catch {
            throw APIError.badRequest("\(what) is not valid JSON for this request: \(describe(error))", code: .invalidJSON)
        }
        try requireObjectWithoutNulls(body, decoded: value)
        return value
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing field \(key.stringValue)"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            return "wrong type at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted(let ctx): return ctx.debugDescription
        default: return "\(error)"
        }
    }

    /// Name rules (`NameRules`, shared with the client) with room for a sealed name: 400
    /// `invalid_name` for an empty name, `.` or `..`, a `/` or NUL, or more than `maxNameBytes`.
    static func validateName(_ name: String) throws {
        guard let problem = NameRules.problem(with: name, maxBytes: maxNameBytes) else { return }
        let why: String
        switch problem {
        case .empty: why = "a name cannot be empty"
        case .tooLong(_, let max): why = "a name is at most \(max) bytes"
        case .containsSlash, .containsNUL: why = "a name cannot contain '/' or NUL"
        case .reserved: why = "'.' and '..' are not names"
        }
        throw APIError.badRequest(why, code: .invalidName)
    }

    /// Names are at most this long: room for an end-to-end name token of a 255-byte name.
    static let maxNameBytes = 1024
    /// Sealed records (`meta`, `contentMeta`) are at most this long.
    static let maxRecordBytes = 4096

    /// 400 unless `id` is 32 lowercase hex (a client-chosen id).
    static func validateClientId(_ id: String) throws {
        guard Hex.isLowercase(id, count: 32) else {
            throw APIError.badRequest("an id is 32 lowercase hex digits", code: .invalidId)
        }
    }

    /// 400 unless a sealed record fits the limit and is printable ASCII.
    static func validateRecord(_ record: String?, _ field: String) throws {
        guard let record else { return }
        guard !record.isEmpty, record.utf8.count <= maxRecordBytes, record.utf8.allSatisfy({ (33...126).contains($0) }) else {
            throw APIError.badRequest("\(field) must be 1–\(maxRecordBytes) printable ASCII bytes", code: .invalidRecord)
        }
    }

    static func etag(_ f: FileResource) -> (String, String) { ("ETag", "\"\(f.version)\"") }

    /// A JSON plan for routes without a body.
    static func respond<T: Encodable>(_ value: T, status: Int = 200, headers: [(String, String)] = []) -> RequestPlan {
        .respond(.json(value, status: status, headers: headers))
    }

    /// A listing page, written by `APIJSON.encode(_:)` (the same bytes, without `JSONEncoder`).
    static func respond(_ list: FileList) -> RequestPlan {
        .respond(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: .bytes(APIJSON.encode(list))))
    }

    static let jsonLimit = 1 << 20
    static let folderMime = "application/vnd.vault.folder"
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}
