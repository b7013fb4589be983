import Foundation
import VaultAPI
import VaultCore
import VaultCrypto
import VaultHTTP

/// The key envelope on the server (SECURITY.md "Envelope"): checked at every sync, uploaded after
/// every change of the slots, and the rotation another device made caught up at `vault unlock`.
extension SyncClient {
    /// Brings the keyslot file and the account's envelope in step (`EnvelopeSync`), once per
    /// client. Throws `.locked` ("unlock again") when another device rotated the key, an
    /// integrity error for an envelope this device refuses.
    public func syncEnvelope() throws {
        guard !envelopeInStep else { return }
        try EnvelopeSync(api: api, vault: vault, policy: policy, say: say).run()
        envelopeInStep = true
    }

    /// After a change of the slots or the key (`vault key …`): uploads the envelope now. When the
    /// server cannot be reached the change stays local and the next sync uploads it; returns a
    /// note saying so (nil when it was uploaded, or when the vault is not logged in).
    public static func publishEnvelope(vault: Vault, policy: EffectivePolicy, say: @escaping (String) -> Void = { _ in }) throws -> String? {
        guard try SyncAccount.load(from: vault) != nil else { return nil }
        do {
            let client = try SyncClient(vault: vault, policy: policy, say: say)
            client.api.failFastWhenUnreachable = true
            try client.syncEnvelope()
            return nil
        } catch let e as VaultError where e.kind == .io {
            return "the server could not be reached (\(e.message)); the change is kept here and the next `vault sync` uploads it"
        } catch let u as ServerUnreachable {
            return "\(u); the change is kept here and the next `vault sync` uploads it"
        }
    }

    /// At `vault unlock` of a vault that syncs: when the account's envelope holds a newer key
    /// epoch (another device rotated), `password` or `recoveryKey` unlocks it there, its key
    /// history must lead back to this device's own key, and this device is re-keyed to it (the
    /// local rotation, crash-safe). Returns what happened for people, or nil when nothing was to
    /// do. A server that cannot be reached leaves the vault as it was (a note says so).
    public static func catchUpRotation(vault: Vault, policy: EffectivePolicy, password: SecureBytes?, recoveryKey: SecureBytes?,
                                       say: @escaping (String) -> Void = { _ in }) throws -> String? {
        guard !vault.isReadOnly, try SyncAccount.load(from: vault) != nil else { return nil }
        let client = try SyncClient(vault: vault, policy: policy, say: say)
        client.api.failFastWhenUnreachable = true
        let sync = EnvelopeSync(api: client.api, vault: vault, policy: policy, say: say)
        let remote: EnvelopeSync.Remote
        do {
            guard case .found(let r) = try sync.fetch() else { return nil }
            remote = r
        } catch let e as VaultError where e.kind == .io {
            return "could not check the server for a newer vault key (\(e.message))"
        } catch let u as ServerUnreachable {
            return "could not check the server for a newer vault key (\(u))"
        }
        let file = try EnvelopeCheck.precheck(remote.bytes, policy: policy)
        guard file.body.epoch > vault.keyslots.body.epoch else { return nil }
        guard file.body.vaultId == vault.vaultId else { throw EnvelopeCheck.refused("it belongs to another vault") }
        let device = vault.remoteCodec.openDeviceLabel(file.body.device) ?? "another device"
        let newMaster: SecureBytes
        do { newMaster = try Vault.unlockEnvelope(file, bytes: remote.bytes, password: password, recoveryKey: recoveryKey) } catch let e as VaultError where e.kind == .wrongPassword {
            throw VaultError(.wrongPassword, "the vault key was rotated on \(device), and this \(recoveryKey == nil ? "password" : "recovery key") does not open the new key",
                             hint: "use the password (or recovery key) of the vault as it is now on that device")
        }
        let r = try vault.adoptRotation(envelope: remote.bytes, newMaster: newMaster)
        try sync.setBase(remote.bytes, remote.version)
        return "The vault key was rotated on \(device): this device now uses epoch \(r.epoch) (\(r.rewrappedBlobs) data key(s) rewrapped)."
    }

    /// Downloads the content of every file on the server that is not on this device (before
    /// `vault key reencrypt` re-uploads everything). Returns how many it downloaded.
    public func downloadAllMissing() throws -> Int {
        try syncEnvelope()
        var done = 0
        for id in try vault.remoteFilesNotDownloaded() {
            guard let node = try vault.node(id: id) else { continue }
            let download = ContentDownload(api: api, vault: vault, retry: retry, say: say)
            download.onProgress = onProgress
            _ = try download.run(node)
            done += 1
        }
        return done
    }
}
