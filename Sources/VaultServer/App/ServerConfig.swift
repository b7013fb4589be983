/// Everything `vault-server serve` can be told on its command line.
public struct ServerConfig: Sendable {
    public var dataDir: String = ""
    public var host: String = "127.0.0.1"
    public var port: UInt16 = 8443
    public var tlsCertFile: String?
    public var tlsKeyFile: String?
    /// Enables `/v1/test/faults`; refused (404) otherwise.
    public var testFaults = false
    /// Defaults to `DATA/jwt.secret`, generated at first start.
    public var jwtSecretFile: String?
    /// Bearer token lifetime.
    public var sessionTTL: Int = 3600
    /// Fixed chunk size of resumable uploads (the last chunk may be shorter).
    public var chunkSize: Int64 = 8 << 20
    /// Largest body of a simple or multipart upload.
    public var maxBody: Int64 = 256 << 20
    /// Per-user quota (revisions plus open sessions).
    public var quota: Int64 = 1 << 40
    /// Open resumable sessions per user.
    public var maxSessions: Int = 100
    /// Revisions kept per file (the head always is).
    public var revisionsKeep: Int = 10
    /// Change-feed entries kept per user; older cursors get 410.
    public var changesKeep: Int = 100_000
    /// Resumable session lifetime.
    public var uploadTTL: Int = 24 * 3600
    /// Seconds without a byte after which a chunk's writer may be superseded by a new request
    /// for the same chunk (its connection may be dead without the server knowing).
    public var chunkStallTimeout: Int = 10
    /// Seconds between expiry sweeps.
    public var sweepInterval: Int = 30
    /// Seconds between SSE keep-alive comments.
    public var keepAliveInterval: Int = 15
    /// libmicrohttpd connection cap.
    public var maxConnections: Int = 1000

    public init() {}
}
