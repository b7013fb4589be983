import Foundation

/// A command-line mistake: printed with the usage, exit code 2.
public struct UsageError: Error, CustomStringConvertible {
    public let description: String
}

/// The parsed `vault-server` command.
enum ServerCommand {
    case serve(ServerConfig, logRequests: Bool)
    case userAdd(dataDir: String, name: String, passwordFile: String?)
    case help

    static let usage = """
    usage: vault-server serve --data DIR [--listen HOST:PORT] [options]
           vault-server user add NAME --data DIR [--password-file FILE]   (else the password is read from stdin)

    serve options (defaults in brackets; docs/server.md explains each):
      --tls-cert FILE --tls-key FILE   serve HTTPS with this PEM certificate and key
      --tls-priorities STRING          GnuTLS priority string [TLS 1.2/1.3, ECDHE, AEAD only:
                                       Mozilla "intermediate" without DHE]
      --jwt-secret-file FILE           token signing key [DATA/jwt.secret]
      --session-ttl SECONDS            bearer token lifetime [3600]
      --max-chunk BYTES                resumable chunk size [8 MiB]
      --max-body BYTES                 one-request upload cap [256 MiB]
      --quota BYTES                    per-user storage [1 TiB]
      --max-sessions N                 open resumable sessions per user [100]
      --revisions-keep N               revisions kept per file [10]
      --changes-keep N                 change-feed entries kept per user [100000]
      --upload-ttl SECONDS             resumable session lifetime [86400]
      --chunk-stall SECONDS            a chunk writer silent this long may be taken over [10]
      --sweep-interval SECONDS         expiry sweep period [30]
      --keepalive SECONDS              SSE keep-alive comment period [15]
      --max-event-streams N            open event streams per user, 429 beyond [16]
      --max-connections N              connections at once, all clients [1000]
      --max-connections-per-ip N       connections at once from one IP, 0 = no limit [64]
      --header-timeout SECONDS         time to send a complete request head [20]
      --idle-timeout SECONDS           close a connection silent this long [60]
      --threads N                      connection threads; 0 = one thread per connection [4]
      --workers N                      threads for blocking request work [16]
      --connection-memory BYTES        per-connection buffer memory [32768]
      --login-user-failures N          failed logins per user name before backoff [5]
      --login-ip-failures N            failed logins per client IP before backoff [20]
      --login-base-delay SECONDS       first backoff, doubling per failure [1]
      --login-max-delay SECONDS        longest backoff [900]
      --login-decay SECONDS            one failure is forgotten per this quiet time [600]
      --test-faults                    enable /v1/test/faults (tests only)
      --quiet                          no request log lines
    """

    /// Every option the usage text names (a misspelt limit must not be silently ignored).
    static let knownOptions = Set(usage.matches(of: /--[a-z0-9-]+/).map { String($0.output) })

    static func parse(_ args: [String]) throws -> ServerCommand {
        guard let verb = args.first, !["--help", "-h", "help"].contains(verb) else { return .help }
        var rest = Array(args.dropFirst())
        var options: [String: String] = [:]
        var flags: Set<String> = []
        var positional: [String] = []
        let flagNames: Set<String> = ["--test-faults", "--quiet"]
        while !rest.isEmpty {
            let a = rest.removeFirst()
            if a == "--help" || a == "-h" { return .help }
            if flagNames.contains(a) { flags.insert(a); continue }
            if a.hasPrefix("--") {
                guard knownOptions.contains(a) else { throw UsageError(description: "unknown option \(a)") }
                guard !rest.isEmpty else { throw UsageError(description: "\(a) needs a value") }
                options[a] = rest.removeFirst()
            } else {
                positional.append(a)
            }
        }
        // Bounded so that no later sum (token expiry, session expiry, MHD's UInt32 cap) can overflow.
        func int(_ name: String, max: Int = 1 << 53) throws -> Int? {
            guard let v = options[name] else { return nil }
            guard let i = Digits.parse(v, max: Int64(max)) else {
                throw UsageError(description: "\(name) must be a whole number from 0 to \(max)")
            }
            return Int(i)
        }
        let tenYears = 10 * 366 * 86_400
        guard let data = options["--data"] else { throw UsageError(description: "--data DIR is required") }
        switch verb {
        case "serve":
            var c = ServerConfig()
            c.dataDir = data
            if let listen = options["--listen"] {
                guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
                    throw UsageError(description: "--listen must be HOST:PORT")
                }
                c.host = String(listen[..<colon]); c.port = port
                if c.host == "localhost" { c.host = "127.0.0.1" }
            }
            c.tlsCertFile = options["--tls-cert"]; c.tlsKeyFile = options["--tls-key"]
            guard (c.tlsCertFile == nil) == (c.tlsKeyFile == nil) else {
                throw UsageError(description: "--tls-cert and --tls-key go together")
            }
            c.testFaults = flags.contains("--test-faults")
            c.jwtSecretFile = options["--jwt-secret-file"]
            if let v = try int("--session-ttl", max: tenYears) { c.sessionTTL = max(v, 1) }
            if let v = try int("--max-chunk", max: 1 << 30) { c.chunkSize = Int64(max(v, 1)) }
            if let v = try int("--max-body", max: Int.max) { c.maxBody = Int64(v) }
            if let v = try int("--quota", max: Int.max) { c.quota = Int64(v) }
            if let v = try int("--max-sessions") { c.maxSessions = v }
            if let v = try int("--revisions-keep") { c.revisionsKeep = max(v, 1) }
            if let v = try int("--changes-keep") { c.changesKeep = max(v, 1) }
            if let v = try int("--upload-ttl", max: tenYears) { c.uploadTTL = v }
            if let v = try int("--chunk-stall", max: 86_400) { c.chunkStallTimeout = max(v, 1) }
            if let v = try int("--sweep-interval", max: 86_400) { c.sweepInterval = max(v, 1) }
            if let v = try int("--keepalive", max: 86_400) { c.keepAliveInterval = max(v, 1) }
            if let v = try int("--max-connections", max: 1_000_000) { c.maxConnections = max(v, 1) }
            if let v = try int("--max-connections-per-ip", max: 1_000_000) { c.maxConnectionsPerIP = v }
            if let v = try int("--max-event-streams", max: 1_000_000) { c.maxEventStreams = max(v, 1) }
            if let v = try int("--header-timeout", max: 86_400) { c.headerTimeout = v }
            if let v = try int("--idle-timeout", max: 86_400) { c.idleTimeout = v }
            if let v = try int("--threads") { c.threads = min(v, 256) }
            if let v = try int("--workers") { c.workers = min(max(v, 1), 1024) }
            if let v = try int("--connection-memory") {
                guard v >= 8 << 10 else { throw UsageError(description: "--connection-memory must be at least 8192") }
                c.connectionMemory = v
            }
            if let p = options["--tls-priorities"] {
                guard !p.isEmpty else { throw UsageError(description: "--tls-priorities cannot be empty") }
                c.tlsPriorities = p
            }
            if let v = try int("--login-user-failures") { c.loginThrottle.userFailures = v }
            if let v = try int("--login-ip-failures") { c.loginThrottle.ipFailures = v }
            if let v = try int("--login-base-delay", max: 86_400) { c.loginThrottle.baseDelay = Double(v) }
            if let v = try int("--login-max-delay", max: tenYears) { c.loginThrottle.maxDelay = Double(v) }
            if let v = try int("--login-decay", max: tenYears) { c.loginThrottle.decay = Double(v) }
            return .serve(c, logRequests: !flags.contains("--quiet"))
        case "user":
            guard positional.count == 2, positional[0] == "add" else {
                throw UsageError(description: "expected: vault-server user add NAME --data DIR")
            }
            return .userAdd(dataDir: data, name: positional[1], passwordFile: options["--password-file"])
        default:
            throw UsageError(description: "unknown command \(verb)")
        }
    }
}
