import Foundation
import VaultAPI
import VaultCore
import VaultHTTP
import VaultPrimitives

/// Authenticated calls to the vault server: bearer token, device id, JSON bodies, and one token
/// refresh (with the stored server password) when the server answers 401.
///
/// Synchronous and not thread-safe, like the `HTTPClient` underneath. Token values never reach
/// logs or error messages.
final class ServerAPI {
    /// Where a new token is stored (nil before a vault exists: `vault join`).
    let vault: Vault?
    private(set) var account: SyncAccount
    let http: HTTPClient
    /// Set while content is fetched on demand (`cat`, `get`): a server that cannot be reached at
    /// all (refused, no route, unknown host, connect timeout) throws `ServerUnreachable` at once
    /// instead of a retryable failure.
    var failFastWhenUnreachable = false

    /// The one place a connection to the server is set up: the address as stored is checked
    /// against the transport rules and the policy (`ServerAddress.check`) before any request, and
    /// the policy's pinned keys apply.
    init(vault: Vault?, account: SyncAccount, policy: EffectivePolicy, warn: (String) -> Void) throws {
        self.vault = vault
        self.account = account
        let address = try ServerAddress(account.serverURL)
        try address.check(policy: policy, insecureHTTP: account.insecureHTTP, warn: warn)
        let env = ProcessInfo.processInfo.environment
        var config = HTTPClientConfiguration(
            caFile: account.caFile, pinnedPublicKeys: policy.pinnedPublicKeys.value ?? [],
            connectTimeout: 10, lowSpeedLimit: 1024,
            lowSpeedTime: env["VAULT_SYNC_STALL_SECONDS"].flatMap(TimeInterval.init) ?? 30)
        config.bypassProxy = address.isCleartext   // clear text never to a proxy, which may be elsewhere
        do { http = try HTTPClient(configuration: config) } catch let e as HTTPError {
            throw VaultError(.policy, "cannot set up the connection to \(account.serverURL): \(e)",
                             hint: "check the policy's pinnedPublicKeys (each sha256//<base64>)")
        }
    }

    /// The absolute URL of an API path such as `/v1/files`.
    func url(_ path: String) -> String { account.serverURL + path }

    /// Exchanges the stored user name and password for a new token, and stores it.
    func refreshToken() throws {
        let body = try APIJSON.encoder().encode(TokenRequest(username: account.user, password: account.password))
        let req = HTTPRequest(method: .post, url: url("/v1/auth/token"),
                              headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                              body: .bytes([UInt8](body)))
        let r: HTTPResponse
        do { r = try transport { try http.send(req, collectUpTo: 1 << 20) } } catch let e as HTTPError { throw Self.networkError(e, account.serverURL) }
        switch r.status {
        case 200:
            let t = try Self.decode(TokenResponse.self, r)
            account.token = t.token
            account.tokenExpiresAt = t.expiresAt
            if let vault { try account.saveToken(in: vault) }
        case 401:
            throw VaultError(.wrongPassword, "the server refused the password of user '\(account.user)'",
                             hint: "run `vault login --server \(account.serverURL) --user \(account.user)` with the right server password")
        default:
            throw Self.statusError(r, doing: "sign in to \(account.serverURL)")
        }
    }

    /// Sends a request built by `make` (called again for a retry after a token refresh).
    /// With `stream`, a 2xx body goes to it piece by piece; any other body is collected (at most
    /// `collectUpTo` bytes, 1 MiB unless the caller expects more: a page of the listing) into the
    /// returned response. `onHead` sees a streamed (2xx) answer's status and headers
    /// before its first body piece; throwing from it stops the transfer with that error.
    /// Transport failures throw `HTTPError` unchanged.
    func send(_ make: () throws -> HTTPRequest, collectUpTo limit: Int = 1 << 20,
              onHead: ((HTTPResponse) throws -> Void)? = nil,
              stream: ((UnsafeRawBufferPointer) throws -> Void)? = nil) throws -> HTTPResponse {
        if account.token == nil || (account.tokenExpiresAt.map { $0.timeIntervalSinceNow < 30 } ?? true) {
            try refreshToken()
        }
        var refreshed = false
        while true {
            var req = try make()
            req.headers += [("Authorization", "Bearer " + (account.token ?? "")), ("X-Device-Id", account.deviceId)]
            var collected: [UInt8] = []
            var toStream = false
            var response = try transport { try http.send(req, onHead: { head in
                toStream = stream != nil && (200..<300).contains(head.status)
                if toStream { try onHead?(head) }
            }, onBody: { piece in
                if toStream, let stream { try stream(piece); return true }
                guard collected.count + piece.count <= limit else { throw HTTPError.tooLarge }
                collected.append(contentsOf: piece)
                return true
            }) }
            response.body = collected
            if response.status == 401 && !refreshed {
                refreshed = true
                try refreshToken()
                continue
            }
            return response
        }
    }

    /// A JSON call with an encoded body.
    func json<B: Encodable>(_ method: HTTPMethod, _ path: String, body: B, headers: [(String, String)] = []) throws -> HTTPResponse {
        try json(method, path, bytes: [UInt8](try APIJSON.encoder().encode(body)), headers: headers)
    }

    /// A JSON call: sends `bytes` (if any) as the JSON body, collects the answer.
    func json(_ method: HTTPMethod, _ path: String, bytes: [UInt8]? = nil, headers: [(String, String)] = [],
              collectUpTo limit: Int = 1 << 20) throws -> HTTPResponse {
        try send({
            HTTPRequest(method: method, url: url(path),
                        headers: [("Accept", "application/json")] + (bytes == nil ? [] : [("Content-Type", "application/json")]) + headers,
                        body: bytes.map { .bytes($0) } ?? .none)
        }, collectUpTo: limit)
    }

    /// A small metadata call, retried with backoff (`retry`) on retryable failures (a 409 is an
    /// answer, never retried); `say` hears each retry. Gives up with an I/O error.
    func retrying(_ retry: RetryPolicy, say: (String) -> Void, _ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        var failures = 0
        while true {
            var reason: String
            var retryAfter: TimeInterval?
            do {
                let r = try body()
                guard RetryPolicy.isRetryable(status: r.status) && r.status != 409 else { return r }
                reason = "server answered \(r.status)"
                retryAfter = RetryPolicy.retryAfter(r)
            } catch let e as HTTPError {
                guard RetryPolicy.isRetryable(e) else { throw ServerAPI.networkError(e, account.serverURL) }
                reason = e.description
            }
            failures += 1
            if failures >= retry.maxAttempts {
                throw VaultError(.io, "the server kept failing (\(reason))", hint: "run `vault sync` again later")
            }
            let wait = retry.delay(attempt: failures - 1, retryAfter: retryAfter)
            say("\(reason); retrying in \(String(format: "%.1f", wait)) s")
            Thread.sleep(forTimeInterval: wait)
        }
    }

    /// A transfer request: a retryable network failure becomes `RetryableFailure` (the transfer's
    /// own backoff retries it), any other one the network error to show.
    func retryableTransport(_ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        do { return try body() } catch let e as HTTPError {
            if RetryPolicy.isRetryable(e) { throw RetryableFailure(reason: e.description, retryAfter: nil) }
            throw ServerAPI.networkError(e, account.serverURL)
        }
    }

    /// Runs a transfer; with `failFastWhenUnreachable`, a server that cannot be reached throws
    /// `ServerUnreachable` (other transport failures are rethrown unchanged).
    func transport<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as HTTPError {
            switch e {
            case .connect(let m) where failFastWhenUnreachable, .timeout(let m) where failFastWhenUnreachable:
                throw ServerUnreachable(server: account.serverURL, reason: m)
            default: throw e
            }
        }
    }

    // MARK: - Decoding and errors

    static func decode<T: Decodable>(_ type: T.Type, _ r: HTTPResponse) throws -> T {
        try decode(type, Data(r.body), status: r.status)
    }

    /// Like `decode(_:_:)`, but the body moves out of `r` first, so that a large answer (a
    /// listing page) is not held twice while it is decoded.
    static func decode<T: Decodable>(_ type: T.Type, taking r: inout HTTPResponse) throws -> T {
        let data = Data(r.body)
        r.body = []
        return try decode(type, data, status: r.status)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data, status: Int) throws -> T {
        do { return try APIJSON.decoder().decode(type, from: data) } catch {
            throw VaultError(.io, "the server sent an answer vault cannot read (HTTP \(status), expected \(type))",
                             hint: "check that the server URL points at a vault server")
        }
    }

    /// The server's error code and message, when the body is the API's error JSON.
    static func apiError(_ r: HTTPResponse) -> APIErrorBody.Detail? {
        (try? APIJSON.decoder().decode(APIErrorBody.self, from: Data(r.body)))?.error
    }

    static func statusError(_ r: HTTPResponse, doing what: String) -> VaultError {
        let detail = apiError(r).map { "\($0.message) (\($0.code))" } ?? "no details"
        return VaultError(.io, "could not \(what): the server answered HTTP \(r.status): \(detail)",
                          hint: r.status >= 500 ? "the server has a problem; try again later" : nil)
    }

    static func networkError(_ e: HTTPError, _ server: String) -> VaultError {
        switch e {
        case .tls(let m):
            return VaultError(.insecure, "the TLS connection to \(server) was refused: \(m)",
                              hint: "check the server certificate, --ca-file and the policy's pinnedPublicKeys")
        default:
            return VaultError(.io, "cannot reach \(server): \(e)", hint: "check the network and the server address, then try again")
        }
    }
}

/// The server could not be reached at all (see `ServerAPI.failFastWhenUnreachable`).
struct ServerUnreachable: Error, CustomStringConvertible {
    let server: String
    let reason: String
    var description: String { "cannot reach \(server): \(reason)" }
}
