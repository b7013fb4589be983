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
    usage: vault-server serve --data DIR [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE]
                              [--test-faults] [--jwt-secret-file FILE] [--session-ttl SECONDS]
                              [--max-chunk BYTES] [--max-body BYTES] [--quota BYTES]
                              [--max-sessions N] [--revisions-keep N] [--changes-keep N]
                              [--upload-ttl SECONDS] [--chunk-stall SECONDS] [--sweep-interval SECONDS]
                              [--keepalive SECONDS] [--max-connections N] [--quiet]
           vault-server user add NAME --data DIR [--password-file FILE]   (else the password is read from stdin)
    """

    static func parse(_ args: [String]) throws -> ServerCommand {
        guard let verb = args.first else { return .help }
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
