import Foundation
import VaultKeys
#if canImport(Glibc)
import Glibc
#endif

/// Where the agent of one local copy of a vault lives: `$XDG_RUNTIME_DIR/vault/` (0700, owned by
/// the user), with `agent-<id>.sock` (the socket, 0600) and `agent-<id>.pid` (held with `flock`
/// while the agent runs, and holding its pid), `<id>` the local copy's id
/// (`VaultLayout.localId`, 16 hex digits): two folders of one vault each have their own agent.
public struct AgentPaths: Sendable {
    /// `$XDG_RUNTIME_DIR/vault`.
    public let directory: String
    /// The local copy's id (`VaultLayout.localId(vaultId:)`).
    public let localId: String

    /// The paths for the local copy `localId`, or nil when `XDG_RUNTIME_DIR` is not an absolute
    /// path (no agent can run then: the runtime folder is where the socket lives).
    public init?(localId: String, environment: [String: String]) {
        guard let runtime = Self.runtimeDirectory(environment) else { return nil }
        directory = runtime + "/vault"
        self.localId = localId
    }

    static func runtimeDirectory(_ env: [String: String]) -> String? {
        guard let r = env["XDG_RUNTIME_DIR"], r.hasPrefix("/") else { return nil }
        return r
    }

    var tag: String { String(localId.prefix(16)) }
    /// The Unix socket the agent serves.
    public var socket: String { directory + "/agent-\(tag).sock" }
    /// The lock file held while the agent runs (one agent per user and local copy).
    public var pidFile: String { directory + "/agent-\(tag).pid" }

    /// Every agent socket of this user, of every local copy (`vault lock --all`); an agent of an
    /// older version (named by the vault id's first 16 hex digits) is listed too.
    public static func allSockets(environment: [String: String]) -> [String] {
        guard let runtime = runtimeDirectory(environment) else { return [] }
        let dir = runtime + "/vault"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasPrefix("agent-") && $0.hasSuffix(".sock") }.sorted().map { dir + "/" + $0 }
    }

    /// Creates the runtime folder (0700) if needed and refuses one that is not this user's own
    /// or that others can write.
    func ensureDirectory() throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw VaultError(.io, "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard lstat(directory, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError(.insecure, "\(directory) is not a folder", hint: "remove it and start the agent again")
        }
        guard st.st_uid == getuid(), st.st_mode & 0o077 == 0 else {
            throw VaultError(.insecure, "\(directory) is owned by another user or open to others (it must be 0700 and yours)",
                             hint: "chmod 700 \(directory), or remove it and start the agent again")
        }
    }
}
