import Foundation
import VaultCore

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

    /// The account stored in `vault`, or nil when `vault login` never ran.
    public static func load(from vault: Vault) throws -> SyncAccount? {
        let v = try vault.syncState([.serverURL, .serverUser, .deviceId, .serverCAFile, .serverInsecureHTTP, .serverPassword,
                                     .serverToken, .serverTokenExpires])
        guard let url = v[.serverURL], let user = v[.serverUser], let password = v[.serverPassword] else { return nil }
        return SyncAccount(serverURL: TestHooks.serverURLOverride ?? url, user: user,
                           deviceId: v[.deviceId] ?? UUID().uuidString.lowercased(),
                           caFile: v[.serverCAFile], insecureHTTP: v[.serverInsecureHTTP] == "1",
                           password: password, token: v[.serverToken],
                           tokenExpiresAt: v[.serverTokenExpires].flatMap(Double.init).map(Date.init(timeIntervalSince1970:)))
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
        try vault.setSyncState([
            (.serverURL, serverURL), (.serverUser, user), (.deviceId, deviceId), (.serverCAFile, caFile),
            (.serverInsecureHTTP, insecureHTTP ? "1" : nil),
            (.serverPassword, password), (.serverToken, token),
            (.serverTokenExpires, tokenExpiresAt.map { String($0.timeIntervalSince1970) }),
        ])
    }

    /// Stores a freshly obtained token.
    func saveToken(in vault: Vault) throws {
        try vault.setSyncState([(.serverToken, token), (.serverTokenExpires, tokenExpiresAt.map { String($0.timeIntervalSince1970) })])
    }
}
