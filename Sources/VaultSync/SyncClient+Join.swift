import Foundation
import VaultAPI
import VaultCore
import VaultCrypto
import VaultHTTP

/// A second device joins the vault an account holds (`vault join`, SECURITY.md "Envelope").
extension SyncClient {
    /// Where and how to join.
    public struct JoinRequest {
        public var serverURL: String
        public var user: String
        public var serverPassword: SecureBytes
        public var caFile: String?
        public var insecureHTTP: Bool
        /// The vault password, or (instead) a recovery key as typed.
        public var password: SecureBytes?
        public var recoveryKey: SecureBytes?

        public init(serverURL: String, user: String, serverPassword: SecureBytes, caFile: String?, insecureHTTP: Bool,
                    password: SecureBytes?, recoveryKey: SecureBytes?) {
            self.serverURL = serverURL; self.user = user; self.serverPassword = serverPassword; self.caFile = caFile
            self.insecureHTTP = insecureHTTP; self.password = password; self.recoveryKey = recoveryKey
        }
    }

    /// Signs in, fetches the account's envelope, checks it (format, KDF bounds and the policy's
    /// floors, before any key work), unlocks it with the password or recovery key, verifies its
    /// MAC, and creates the local vault at `layout` with the same vault id, master key and
    /// keyslots, its own database and a new device id, logged in to the account. Nothing is
    /// created when any step fails. Returns the client of the new vault.
    public static func join(layout: VaultLayout, _ request: JoinRequest, policy: EffectivePolicy,
                            warn: (String) -> Void = { _ in }) throws -> SyncClient {
        if Vault.exists(layout) {
            throw VaultError(.alreadyExists, "a vault already exists at \(layout.root)", hint: "use `vault join` in an empty VAULT_HOME")
        }
        let url = try ServerAddress(request.serverURL).url
        let account = SyncAccount(serverURL: url, user: request.user, deviceId: UUID().uuidString.lowercased(),
                                  caFile: request.caFile.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
                                  insecureHTTP: request.insecureHTTP,
                                  password: request.serverPassword.withUnsafeBytes { String(decoding: $0, as: UTF8.self) },
                                  token: nil, tokenExpiresAt: nil)
        let api = try ServerAPI(vault: nil, account: account, policy: policy, warn: warn)
        try api.refreshToken()
        let r: HTTPResponse
        do { r = try api.json(.get, "/v1/keys/envelope") } catch let e as HTTPError { throw ServerAPI.networkError(e, url) }
        switch r.status {
        case 200: break
        case 404:
            throw VaultError(.notFound, "the account \(request.user) on \(url) holds no vault yet",
                             hint: "create it on the first device (`vault init`, then `vault login`), then join")
        default: throw ServerAPI.statusError(r, doing: "read the key envelope")
        }
        let remote = try EnvelopeSync.remote(r)
        let file = try EnvelopeCheck.precheck(remote.bytes, policy: policy)
        let master = try Vault.unlockEnvelope(file, bytes: remote.bytes, password: request.password,
                                              recoveryKey: try request.recoveryKey.map(RecoveryKey.parse))
        let vault = try Vault.join(layout: layout, envelope: remote.bytes, masterKey: master)
        do {
            try api.account.save(to: vault)
            let client = SyncClient(api: try ServerAPI(vault: vault, account: api.account, policy: policy, warn: warn), vault: vault,
                                    policy: policy, say: { _ in })
            try EnvelopeSync(api: client.api, vault: vault, policy: policy, say: { _ in }).setBase(remote.bytes, remote.version)
            return client
        } catch {
            vault.removeJoined()
            throw error
        }
    }
}
