import Foundation
import VaultCore
import VaultSQL

/// The server this vault syncs with, as kept in the encrypted `sync_state` table: address, user,
/// device id, the current bearer token and its expiry, and the server password (the server has no
/// refresh tokens, so a new token needs it; it lives only inside the encrypted database).
public struct SyncAccount: Sendable {
    /// The server's base URL, without a trailing slash (`https://drive.example:8443`).
    public var serverURL: String
    /// The user name on the server.
    public var user: String
    /// This vault's device id, sent as `X-Device-Id`.
    public var deviceId: String
    /// A PEM CA bundle to trust for this server instead of the system store, if any.
    public var caFile: String?
    /// `vault login --insecure-http`: plain http:// to another machine was asked for explicitly.
    public var insecureHTTP: Bool = false
    var password: String
    var token: String?
    var tokenExpiresAt: Date?

    static let keys = ["server_url", "server_user", "device_id", "server_ca_file", "server_insecure_http",
                       "server_password", "server_token", "server_token_expires"]

    /// The account stored in `vault`, or nil when `vault login` never ran.
    public static func load(from vault: Vault) throws -> SyncAccount? {
        var v: [String: String] = [:]
        for row in try vault.db.query("SELECT key, value FROM sync_state WHERE key LIKE 'server_%' OR key = 'device_id'") {
            if let k = row[0].string, let value = row[1].string { v[k] = value }
        }
        guard let url = v["server_url"], let user = v["server_user"], let password = v["server_password"] else { return nil }
        return SyncAccount(serverURL: TestHooks.serverURLOverride ?? url, user: user,
                           deviceId: v["device_id"] ?? UUID().uuidString.lowercased(),
                           caFile: v["server_ca_file"], insecureHTTP: v["server_insecure_http"] == "1",
                           password: password, token: v["server_token"],
                           tokenExpiresAt: v["server_token_expires"].flatMap(Double.init).map(Date.init(timeIntervalSince1970:)))
    }

    /// Loads the account or explains how to create one.
    public static func require(_ vault: Vault) throws -> SyncAccount {
        guard let a = try load(from: vault) else {
            throw VaultError(.notFound, "this vault is not connected to a server",
                             hint: "run `vault login --server URL --user NAME` first")
        }
        return a
    }

    /// Writes every field (one transaction).
    func save(to vault: Vault) throws {
        let values: [(String, String?)] = [
            ("server_url", serverURL), ("server_user", user), ("device_id", deviceId), ("server_ca_file", caFile),
            ("server_insecure_http", insecureHTTP ? "1" : nil),
            ("server_password", password), ("server_token", token),
            ("server_token_expires", tokenExpiresAt.map { String($0.timeIntervalSince1970) }),
        ]
        try vault.db.transaction {
            for (k, value) in values {
                try vault.db.run("DELETE FROM sync_state WHERE key = ?", [k])
                if let value { try vault.db.run("INSERT INTO sync_state(key, value) VALUES (?, ?)", [k, value]) }
            }
        }
    }

    /// Stores a freshly obtained token.
    func saveToken(in vault: Vault) throws {
        try vault.db.transaction {
            try vault.db.run("DELETE FROM sync_state WHERE key IN ('server_token', 'server_token_expires')")
            if let token {
                try vault.db.run("INSERT INTO sync_state(key, value) VALUES ('server_token', ?)", [token])
            }
            if let tokenExpiresAt {
                try vault.db.run("INSERT INTO sync_state(key, value) VALUES ('server_token_expires', ?)",
                                 [String(tokenExpiresAt.timeIntervalSince1970)])
            }
        }
    }
}
