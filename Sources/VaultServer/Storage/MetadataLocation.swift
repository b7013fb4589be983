import VaultPostgres

/// Where the server keeps its metadata: `--metadata` of `serve`, `migrate` and the `user`
/// commands. The default is the embedded SQLite file `DATA/meta.db`.
enum MetadataLocation: Equatable, Sendable, CustomStringConvertible {
    /// The embedded store: one SQLite (unkeyed SQLCipher) file.
    case sqlite(path: String)
    /// A PostgreSQL database (`postgresql://user:password@host:port/database`), shared by any
    /// number of servers.
    case postgresql(url: String)

    /// The location `--metadata` names, or `DATA/meta.db` when it is absent. A value that is not a
    /// `postgresql://` (or `postgres://`) URL is a path of a SQLite file.
    init(argument: String?, dataDir: String) {
        switch argument {
        case nil, "": self = .sqlite(path: dataDir + "/meta.db")
        case let url? where url.hasPrefix("postgresql://") || url.hasPrefix("postgres://"): self = .postgresql(url: url)
        case let path?: self = .sqlite(path: path)
        }
    }

    /// For messages: the path, or the URL with its password masked.
    var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgresql(let url): return PostgresConnection.redact(url)
        }
    }
}
