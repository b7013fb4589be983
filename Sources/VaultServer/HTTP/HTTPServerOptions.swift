/// How the HTTP layer serves connections: address, TLS, threads and the limits that keep one
/// client from holding the server. Defaults and meanings: `ServerConfig`.
struct HTTPServerOptions: Sendable {
    let host: String
    let port: UInt16
    /// PEM key and certificate: HTTPS when both are set.
    let tlsKeyPEM: String?
    let tlsCertPEM: String?
    /// GnuTLS priority string (HTTPS only).
    let tlsPriorities: String?
    /// libmicrohttpd connection threads; 0 = one thread per connection.
    let threads: Int
    /// Threads for blocking request work in pool mode.
    let workers: Int
    let maxConnections: Int
    /// 0: no per-IP limit.
    let maxConnectionsPerIP: Int
    /// Seconds without socket activity before a connection is closed (0: never).
    let idleTimeout: Int
    /// Seconds to deliver a complete request head (0: no deadline).
    let headerTimeout: Int
    let connectionMemory: Int

    init(config c: ServerConfig, tlsKeyPEM: String?, tlsCertPEM: String?) {
        host = c.host; port = c.port
        self.tlsKeyPEM = tlsKeyPEM; self.tlsCertPEM = tlsCertPEM; tlsPriorities = c.tlsPriorities
        threads = c.threads; workers = c.workers
        maxConnections = c.maxConnections; maxConnectionsPerIP = c.maxConnectionsPerIP
        idleTimeout = c.idleTimeout; headerTimeout = c.headerTimeout
        connectionMemory = c.connectionMemory
    }
}
