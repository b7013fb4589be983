import Foundation

/// Everything `vault-server serve` can be told on its command line.
public struct ServerConfig: Sendable {
    public var dataDir: String = ""
    /// `--metadata`: a `postgresql://` URL or a SQLite file; nil is the embedded `DATA/meta.db`.
    public var metadata: String?
    /// Where the metadata lives (`--metadata`, else `DATA/meta.db`).
    var metadataLocation: MetadataLocation { MetadataLocation(argument: metadata, dataDir: dataDir) }
    /// `--metadata-connections`: the pool of connections this process holds to PostgreSQL at most
    /// (requests of different owners run on different ones at once; one more listens for changes).
    public var metadataConnections: Int = 8
    /// `--instance`: this process's name in logs and `/healthz`, and its temp folder (default the
    /// short host name: stable across restarts, so a restart empties what a crash left).
    public var instanceId: String = ServerConfig.defaultInstanceId
    /// `--trusted-proxy`: peers (a load balancer) whose `X-Forwarded-For` names the client, for
    /// the per-IP login backoff; from any other peer the header is ignored.
    public var trustedProxies: Set<String> = []
    /// `--content`: an `s3://` object store URL; nil is the data folder's `content/` and `uploads/`.
    public var content: String?
    /// Seconds the content sweep leaves young unreferenced objects alone (S3: a publish between
    /// its upload and its commit).
    public var contentSweepGrace: Int = 3600
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
    /// Connections at once from one client IP (0: no limit).
    public var maxConnectionsPerIP: Int = 64
    /// Seconds a connection may be silent (no bytes either way) before it is closed.
    public var idleTimeout: Int = 60
    /// Seconds a connection has to deliver a complete request head, counted from its opening
    /// or from the end of its previous request.
    public var headerTimeout: Int = 20
    /// Open `GET /v1/events` streams per user.
    public var maxEventStreams: Int = 16
    /// libmicrohttpd threads: N threads polling the connections, with blocking work on
    /// `workers` and idle event streams suspended; 0 = a thread per connection.
    public var threads: Int = 4
    /// Threads for blocking request work (disk, database, password hashing) when `threads` > 0.
    public var workers: Int = 16
    /// Per-connection memory (request head, read and write buffers).
    public var connectionMemory: Int = 32 << 10
    /// GnuTLS priority string for `--tls-cert`/`--tls-key`.
    public var tlsPriorities: String = ServerConfig.intermediateTLS
    /// Backoff on failed logins.
    public var loginThrottle = LoginThrottlePolicy()

    /// Mozilla's "intermediate" profile as a GnuTLS priority string, without its finite-field
    /// DHE suites: TLS 1.3 and 1.2 only; ECDHE key exchange (X25519, P-256, P-384); AES-GCM or
    /// ChaCha20-Poly1305, nothing else.
    public static let intermediateTLS = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
        + ":-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"
        + ":-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"
        + ":-MAC-ALL:+AEAD"
        + ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1"

    /// The short host name (one instance per machine needs no `--instance`), else `vault`.
    public static var defaultInstanceId: String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        return RequestId.isValid(host) ? host : "vault"
    }

    public init() {}
}
