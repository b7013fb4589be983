import Foundation
import VaultArguments

/// The `vault-server` command tree, on the same parser as `vault` (VaultArguments).
struct VaultServerProgram: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "vault-server",
            abstract: "the reference server the vault client syncs with (REST + SSE over HTTP/1.1, TLS)",
            discussion: """
            vault-server keeps each user's files as sealed blobs the client made (it never sees plaintext or \
            keys), with revisions, a change feed, resumable uploads and an event stream. docs/server.md \
            explains each limit; docs/openapi.yaml describes the API.

            An option given to a command that does not take it is a usage error (exit 2).
            """,
            version: "0.1.0",
            subcommands: [Serve.self, Migrate.self, Export.self, Import.self, User.self, ServerHelp.self],
            sections: [
                ManualSection(title: "Files", items: [
                    ("DATA/meta.db", "Users, files, revisions, the change feed and upload sessions (SQLite), unless --metadata names a PostgreSQL database."),
                    ("DATA/content, DATA/uploads", "Revision content and partial uploads, one file each, unless --content names an S3 bucket (docs/server.md \"Content in an object store\")."),
                    ("DATA/jwt.secret", "The token signing key, made at first start (unless --jwt-secret-file)."),
                ]),
                ManualSection(title: "Exit status", items: [
                    ("0", "Stopped by SIGTERM or SIGINT after a clean shutdown, or a `user` command succeeded."),
                    ("1", "It could not start or the command failed (address in use, unreadable TLS key, a user that exists or does not, `user remove` not confirmed)."),
                    ("2", "A usage error: an unknown or misplaced option, a missing or malformed value."),
                ]),
                ManualSection(title: "See also", paragraphs: ["vault(1); docs/server.md and docs/openapi.yaml in the source tree."]),
            ])
    }
}

/// A non-negative whole number as `vault-server` options take it: ASCII digits only.
struct Count: ExpressibleByArgument {
    let value: Int
    init?(argument: String) {
        guard let v = Digits.parse(argument) else { return nil }
        value = Int(v)
    }
    static var defaultValueName: String { "n" }
    static var expectation: String { "a whole number (digits only)" }
}

/// `vault-server serve`.
struct Serve: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "serve", abstract: "serve the API until SIGTERM or SIGINT",
                             discussion: "Prints `listening on HOST:PORT` on standard output once it accepts connections (port 0 picks a free one); the request log goes to standard error.")
    }

    @Option(help: "the data folder (created, mode 0700)", valueName: "dir", completion: .directory)
    var data: String
    @Option(help: MetadataOption.help, valueName: "url")
    var metadata: String?
    @Option(help: ContentOption.help, valueName: "url")
    var content: String?
    @Option(help: "the content sweep leaves objects younger than this alone, in seconds (default 3600; S3 only)", valueName: "seconds")
    var contentSweepGrace: Count?
    @Option(help: "connections to PostgreSQL this instance holds at most, 1–256 (default 8; one more listens for changes)")
    var metadataConnections: Count?
    @Option(help: "the IPv4 address and port to listen on (default 127.0.0.1:8443)", valueName: "host:port")
    var listen: String?
    @Option(help: "this instance's name in the request log and /healthz, and of its temp folder DATA/tmp/NAME; give each instance sharing a data folder its own (default: the host name)", valueName: "name")
    var instance: String?
    @Option(help: "comma-separated IPv4 addresses of load balancers whose X-Forwarded-For names the client (default none)", valueName: "addresses")
    var trustedProxy: String?
    @Option(help: "serve HTTPS with this PEM certificate (with --tls-key)", valueName: "file", completion: .file)
    var tlsCert: String?
    @Option(help: "the PEM private key of --tls-cert", valueName: "file", completion: .file)
    var tlsKey: String?
    @Option(help: "GnuTLS priority string (default: TLS 1.2/1.3, ECDHE, AEAD only: Mozilla intermediate without DHE)", valueName: "string")
    var tlsPriorities: String?
    @Option(help: "the token signing key (default DATA/jwt.secret)", valueName: "file", completion: .file)
    var jwtSecretFile: String?
    @Option(help: "bearer token lifetime in seconds (default 3600)", valueName: "seconds") var sessionTtl: Count?
    @Option(help: "resumable chunk size in bytes (default 8 MiB)", valueName: "bytes") var maxChunk: Count?
    @Option(help: "one-request upload cap in bytes (default 256 MiB)", valueName: "bytes") var maxBody: Count?
    @Option(help: "per-user storage in bytes (default 1 TiB)", valueName: "bytes") var quota: Count?
    @Option(help: "open resumable sessions per user (default 100)") var maxSessions: Count?
    @Option(help: "revisions kept per file (default 10)") var revisionsKeep: Count?
    @Option(help: "change-feed entries kept per user (default 100000)") var changesKeep: Count?
    @Option(help: "resumable session lifetime in seconds (default 86400)", valueName: "seconds") var uploadTtl: Count?
    @Option(help: "a chunk writer silent this long may be taken over, in seconds (default 10)", valueName: "seconds") var chunkStall: Count?
    @Option(help: "sweep period (expired uploads; event streams of removed users or revoked tokens) in seconds (default 30)", valueName: "seconds") var sweepInterval: Count?
    @Option(help: "SSE keep-alive comment period in seconds (default 15)", valueName: "seconds") var keepalive: Count?
    @Option(help: "open event streams per user, 429 beyond (default 16)") var maxEventStreams: Count?
    @Option(help: "connections at once, all clients (default 1000)") var maxConnections: Count?
    @Option(help: "connections at once from one IP, 0 = no limit (default 64)") var maxConnectionsPerIp: Count?
    @Option(help: "time to send a complete request head, in seconds (default 20)", valueName: "seconds") var headerTimeout: Count?
    @Option(help: "close a connection silent this long, in seconds (default 60)", valueName: "seconds") var idleTimeout: Count?
    @Option(help: "connection threads; 0 = one thread per connection (default 4)") var threads: Count?
    @Option(help: "threads for blocking request work (default 16)") var workers: Count?
    @Option(help: "per-connection buffer memory in bytes, at least 8192 (default 32768)", valueName: "bytes") var connectionMemory: Count?
    @Option(help: "failed logins per user name before backoff (default 5)") var loginUserFailures: Count?
    @Option(help: "failed logins per client IP before backoff (default 20)") var loginIpFailures: Count?
    @Option(help: "first backoff in seconds, doubling per failure (default 1)", valueName: "seconds") var loginBaseDelay: Count?
    @Option(help: "longest backoff in seconds (default 900)", valueName: "seconds") var loginMaxDelay: Count?
    @Option(help: "one failure is forgotten per this quiet time, in seconds (default 600)", valueName: "seconds") var loginDecay: Count?
    @Flag(help: "enable /v1/test/faults (tests only)") var testFaults = false
    @Flag(help: "no request log lines") var quiet = false

    func validate() throws { _ = try config() }

    /// The configuration these options describe. Every number is bounded so that no later sum
    /// (token expiry, session expiry, MHD's UInt32 cap) can overflow.
    func config() throws -> ServerConfig {
        let tenYears = 10 * 366 * 86_400
        func bounded(_ v: Count?, _ name: String, max: Int = 1 << 53) throws -> Int? {
            guard let v else { return nil }
            guard v.value <= max else { throw ValidationError("--\(name) must be a whole number from 0 to \(max)") }
            return v.value
        }
        var c = ServerConfig()
        c.dataDir = data
        c.metadata = metadata
        c.content = try ContentOption.validate(content)
        if let v = try bounded(contentSweepGrace, "content-sweep-grace", max: tenYears) { c.contentSweepGrace = v }
        if let v = try bounded(metadataConnections, "metadata-connections") { c.metadataConnections = min(max(v, 1), 256) }
        if let listen {
            guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
                throw ValidationError("--listen must be HOST:PORT")
            }
            c.host = String(listen[..<colon]); c.port = port
            if c.host == "localhost" { c.host = "127.0.0.1" }
        }
        if let instance {
            // Not `.` or `..`: DATA/tmp/NAME is emptied at start.
            guard RequestId.isValid(instance), instance != ".", instance != ".." else {
                throw ValidationError("--instance must be 1-128 of A-Z a-z 0-9 . _ : - (not . or ..)")
            }
            c.instanceId = instance
        }
        if let trustedProxy {
            let addresses = trustedProxy.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !addresses.isEmpty, addresses.allSatisfy({ ClientAddress.isIPv4($0) }) else {
                throw ValidationError("--trusted-proxy must be IPv4 addresses separated by commas")
            }
            c.trustedProxies = Set(addresses)
        }
        c.tlsCertFile = tlsCert; c.tlsKeyFile = tlsKey
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        c.testFaults = testFaults
        c.jwtSecretFile = jwtSecretFile
        if let v = try bounded(sessionTtl, "session-ttl", max: tenYears) { c.sessionTTL = max(v, 1) }
        if let v = try bounded(maxChunk, "max-chunk", max: 1 << 30) { c.chunkSize = Int64(max(v, 1)) }
        if let v = try bounded(maxBody, "max-body", max: Int.max) { c.maxBody = Int64(v) }
        if let v = try bounded(quota, "quota", max: Int.max) { c.quota = Int64(v) }
        if let v = try bounded(maxSessions, "max-sessions") { c.maxSessions = v }
        if let v = try bounded(revisionsKeep, "revisions-keep") { c.revisionsKeep = max(v, 1) }
        if let v = try bounded(changesKeep, "changes-keep") { c.changesKeep = max(v, 1) }
        if let v = try bounded(uploadTtl, "upload-ttl", max: tenYears) { c.uploadTTL = v }
        if let v = try bounded(chunkStall, "chunk-stall", max: 86_400) { c.chunkStallTimeout = max(v, 1) }
        if let v = try bounded(sweepInterval, "sweep-interval", max: 86_400) { c.sweepInterval = max(v, 1) }
        if let v = try bounded(keepalive, "keepalive", max: 86_400) { c.keepAliveInterval = max(v, 1) }
        if let v = try bounded(maxConnections, "max-connections", max: 1_000_000) { c.maxConnections = max(v, 1) }
        if let v = try bounded(maxConnectionsPerIp, "max-connections-per-ip", max: 1_000_000) { c.maxConnectionsPerIP = v }
        if let v = try bounded(maxEventStreams, "max-event-streams", max: 1_000_000) { c.maxEventStreams = max(v, 1) }
        if let v = try bounded(headerTimeout, "header-timeout", max: 86_400) { c.headerTimeout = v }
        if let v = try bounded(idleTimeout, "idle-timeout", max: 86_400) { c.idleTimeout = v }
        if let v = try bounded(threads, "threads") { c.threads = min(v, 256) }
        if let v = try bounded(workers, "workers") { c.workers = min(max(v, 1), 1024) }
        if let v = try bounded(connectionMemory, "connection-memory") {
            guard v >= 8 << 10 else { throw ValidationError("--connection-memory must be at least 8192") }
            c.connectionMemory = v
        }
        if let p = tlsPriorities {
            guard !p.isEmpty else { throw ValidationError("--tls-priorities cannot be empty") }
            c.tlsPriorities = p
        }
        if let v = try bounded(loginUserFailures, "login-user-failures") { c.loginThrottle.userFailures = v }
        if let v = try bounded(loginIpFailures, "login-ip-failures") { c.loginThrottle.ipFailures = v }
        if let v = try bounded(loginBaseDelay, "login-base-delay", max: 86_400) { c.loginThrottle.baseDelay = Double(v) }
        if let v = try bounded(loginMaxDelay, "login-max-delay", max: tenYears) { c.loginThrottle.maxDelay = Double(v) }
        if let v = try bounded(loginDecay, "login-decay", max: tenYears) { c.loginThrottle.decay = Double(v) }
        return c
    }
}

/// `--metadata`, as `serve`, `migrate` and the `user` commands take it.
enum MetadataOption {
    static let help = "where the metadata lives: a postgresql:// URL (shared by any number of servers) or a SQLite file (default DATA/meta.db)"
}

/// `--content`, as `serve`, `migrate` and the `user` commands take it.
enum ContentOption {
    static let help = "where file content lives: an s3://BUCKET?endpoint=URL&region=R&credentials=FILE object store (credentials also from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), shared by any number of servers (default DATA/content)"

    /// `url` when it is an `s3://` URL the server can use (checked now: a usage error, not a start failure).
    static func validate(_ url: String?) throws -> String? {
        guard let url else { return nil }
        do { _ = try S3Location(url: url) } catch { throw ValidationError("--content: \(error)") }
        return url
    }
}

/// The data folder a `vault-server user`, `export` or `import` command works on, and where its
/// metadata and content live.
struct DataFolder: ParsableArguments {
    @Option(help: "the data folder", valueName: "dir", completion: .directory)
    var data: String
    @Option(help: MetadataOption.help, valueName: "url")
    var metadata: String?
    @Option(help: ContentOption.help, valueName: "url")
    var content: String?

    func validate() throws { _ = try ContentOption.validate(content) }

    /// Where its metadata lives.
    var location: MetadataLocation { MetadataLocation(argument: metadata, dataDir: data) }
}

/// The user a `vault-server user` command is about, and the data folder that holds it.
struct UserTarget: ParsableArguments {
    @Argument(help: "the user name", valueName: "name")
    var name: String
    @Option(help: "the data folder", valueName: "dir", completion: .directory)
    var data: String
    @Option(help: MetadataOption.help, valueName: "url")
    var metadata: String?
    @Option(help: ContentOption.help, valueName: "url")
    var content: String?

    func validate() throws { _ = try ContentOption.validate(content) }
}

/// `vault-server migrate`.
struct Migrate: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "migrate", abstract: "create or upgrade the metadata schema, then exit",
                             discussion: "Brings the metadata store named by --metadata (else DATA/meta.db) to this server's schema and prints its version. `serve` does the same at start; run `migrate` first when several servers share one PostgreSQL database, so none of them starts on an old schema. A store written by a newer server is refused. With --content s3://…, it also creates the bucket where the store allows it (one that exists already is fine).")
    }

    @Option(help: "the data folder (for the default SQLite file)", valueName: "dir", completion: .directory)
    var data: String?
    @Option(help: MetadataOption.help, valueName: "url")
    var metadata: String?
    @Option(help: ContentOption.help, valueName: "url")
    var content: String?

    func validate() throws {
        guard data != nil || metadata != nil else { throw ValidationError("give --metadata, or --data for DATA/meta.db") }
        _ = try ContentOption.validate(content)
    }

    /// Where the store to migrate lives.
    var location: MetadataLocation { MetadataLocation(argument: metadata, dataDir: data ?? ".") }
}

/// `vault-server export`.
struct Export: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "export", abstract: "write the whole store to a new folder, for `import` into another",
                             discussion: "Writes OUT/metadata.jsonl (every account, file, revision, upload session, key envelope and the change feed), the content and part files under OUT/content and OUT/uploads (hard links where the folder allows), DATA/jwt.secret, and last OUT/manifest.json. Stop the servers first. OUT holds password hashes and the token signing key: it is made mode 0700, its files 0600; keep it like the data folder, and delete it after the import. With --content s3://… the revisions' objects are read into OUT/content; unfinished uploads, which live in the bucket as multipart uploads, are left out (their clients start them again).")
    }

    @OptionGroup var folder: DataFolder
    @Option(help: "the new folder to write (must not exist or be empty)", valueName: "dir", completion: .directory)
    var out: String

}

/// `vault-server import`.
struct Import: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "import", abstract: "read an `export` folder into an empty store",
                             discussion: "Creates or migrates the store named by --metadata (else DATA/meta.db), refuses one that has users, inserts every row in one transaction, then links or copies the content files into DATA and installs the token signing key, so clients carry on with their tokens and change-feed cursors. From PostgreSQL into SQLite the cursors cannot be kept (one feed numbering for all owners): each client then lists its tree once. With --content s3://… each content file becomes its revision's object in the bucket; the bundle's unfinished uploads are left out (their clients start them again).")
    }

    @OptionGroup var folder: DataFolder
    @Option(help: "the folder `vault-server export` wrote", valueName: "dir", completion: .directory)
    var from: String

}

/// `vault-server user`: accounts, run against the data folder (also while `serve` runs on it:
/// the server reads users and token generations from the same database on every request).
struct User: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "user", abstract: "manage the server's users",
                             discussion: "Each command works on the data folder's database; a server running on it sees the change at its next request.",
                             subcommands: [Add.self, List.self, Passwd.self, Remove.self, Sessions.self])
    }

    /// `vault-server user add NAME`.
    struct Add: ParsableCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "add", abstract: "add a user and print its id",
                                 discussion: "The password is the first line of --password-file, else of standard input.")
        }

        @OptionGroup var user: UserTarget
        @Option(help: "read the password from FILE (else from standard input)", valueName: "file", completion: .file)
        var passwordFile: String?
    }

    /// `vault-server user list`.
    struct List: ParsableCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "list", abstract: "list the users: name, id and creation time",
                                 discussion: "One user a line, NAME ID CREATED (UTC, ISO 8601), separated by tabs, sorted by name. With --json: an array of {\"name\", \"id\", \"createdAt\"}.")
        }

        @OptionGroup var folder: DataFolder
        @Flag(help: "print JSON instead of lines")
        var json = false
    }

    /// `vault-server user passwd NAME`.
    struct Passwd: ParsableCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "passwd", abstract: "set a user's password and revoke its tokens",
                                 discussion: "The new password is the first line of --password-file, else of standard input. Every token issued before is refused from now on, so each device signs in again with the new password.")
        }

        @OptionGroup var user: UserTarget
        @Option(help: "read the new password from FILE (else from standard input)", valueName: "file", completion: .file)
        var passwordFile: String?
    }

    /// `vault-server user remove NAME`.
    struct Remove: ParsableCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "remove", abstract: "remove a user and delete all its data",
                                 discussion: "Deletes the user, its tokens (refused at once), its files and folders, every revision and its content, its trash, its change feed, its upload sessions with their partial data, and its key envelope. Other users are untouched. It asks for confirmation on a terminal; without one it refuses unless --yes is given. There is no undo.")
        }

        @OptionGroup var user: UserTarget
        @Flag(help: "do not ask for confirmation (scripts)")
        var yes = false
    }

    /// `vault-server user sessions`.
    struct Sessions: ParsableCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(name: "sessions", abstract: "manage a user's tokens", subcommands: [Revoke.self])
        }

        /// `vault-server user sessions revoke NAME`.
        struct Revoke: ParsableCommand {
            static var configuration: CommandConfiguration {
                CommandConfiguration(name: "revoke", abstract: "revoke every token of a user",
                                     discussion: "Every token the user holds now is refused from its next request; signing in with the password gives a new one. Use it when a device holding a token is lost.")
            }

            @OptionGroup var user: UserTarget
        }
    }
}

/// `vault-server help [COMMAND…]`: the help of a command; `--man` prints vault-server(8).
struct ServerHelp: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "help", abstract: "show the help of a command, or the manual page with --man")
    }

    @Flag(help: "print the manual page vault-server(8) in roff (what docs/vault-server.8 holds)")
    var man = false
    @Argument(help: "the command, and its subcommand", valueName: "command")
    var command: [String] = []

    func validate() throws {
        if man && !command.isEmpty { throw ValidationError("--man prints the whole manual; it takes no command") }
        if CommandParser(VaultServerProgram.self).root.descendant(command) == nil {
            throw ValidationError("no command `vault-server \(command.joined(separator: " "))`")
        }
    }

    /// The text this asks for.
    var text: String {
        if man { return ManualGenerator.page(VaultServerProgram.self, section: 8, title: "System Administration") }
        return HelpGenerator.help(CommandParser(VaultServerProgram.self).root.descendant(command)!)
    }
}
