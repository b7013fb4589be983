import Foundation
import VaultAPI
import VaultCore
import VaultCrypto
import VaultHTTP
import VaultPrimitives

/// Keeps this vault's keyslot file and the account's key envelope (`/v1/keys/envelope`) in step
/// (SECURITY.md "Envelope"). The envelope both last agreed on (its bytes and the server's
/// version) is kept in the encrypted database as the *base*:
///
/// | server vs base | local vs base | action |
/// |---|---|---|
/// | same (or 304) | same | nothing |
/// | newer generation, same epoch | same | verified, then adopted byte for byte |
/// | same | changed here | uploaded with `If-Match` |
/// | changed | changed here | this device's changes re-applied on top (`Vault.mergeEnvelope`), uploaded with `If-Match` |
/// | newer epoch | any | kept aside; `EnvelopeRotated` ("unlock again") |
/// | none | — | created (`If-None-Match: *`) when the account has no files; refused when it has (plaintext, an older vault) |
///
/// A 412 on upload carries the server's current envelope: the loop goes round again with it.
/// Every refusal (another vault, weaker KDF parameters, another format, an older generation or
/// epoch than seen, a MAC that does not verify) is an integrity error from `Vault.verifyEnvelope`.
final class EnvelopeSync {
    let api: ServerAPI
    let vault: Vault
    let policy: EffectivePolicy
    let say: (String) -> Void
    /// The backoff of every call (read from the environment once).
    private let retry = RetryPolicy.fromEnvironment()

    init(api: ServerAPI, vault: Vault, policy: EffectivePolicy, say: @escaping (String) -> Void) {
        self.api = api; self.vault = vault; self.policy = policy; self.say = say
    }

    /// The envelope as the server holds it.
    struct Remote {
        var bytes: [UInt8]
        var version: Int64
    }

    /// Brings the keyslot file and the server's envelope in step (see the table above).
    func run() throws {
        let base = try storedBase()
        let localAtStart = try vault.envelopeBytes()
        var remote: Remote?
        switch try fetch(ifNoneMatch: base.flatMap { constantTimeEqual($0.bytes, localAtStart) ? $0.version : nil }) {
        case .unchanged: return
        case .missing: remote = nil
        case .found(let r): remote = r
        }
        for _ in 0..<8 {
            let local = try vault.envelopeBytes()
            guard let r = remote else {
                if base == nil, try accountHasFiles() { throw Self.plaintextAccount }
                switch try put(local, version: nil) {
                case .stored(let v): return try setBase(local, v)
                case .changed(let now): remote = now; continue
                }
            }
            let theirs: KeyslotFile
            do {
                theirs = try vault.verifyEnvelope(r.bytes, seen: base.map { ($0.file, $0.bytes) }, policy: policy)
            } catch let rotated as EnvelopeRotated {
                try vault.keepPendingEnvelope(r.bytes)
                throw rotated.error
            }
            if constantTimeEqual(r.bytes, local) { return try setBase(r.bytes, r.version) }
            let localChanged = base.map { !constantTimeEqual(local, $0.bytes) } ?? true
            let serverChanged = base.map { !constantTimeEqual(r.bytes, $0.bytes) } ?? true
            if !localChanged {
                try vault.adoptEnvelope(r.bytes)
                try setBase(r.bytes, r.version)
                say("key slots changed on \(vault.remoteCodec.openDeviceLabel(theirs.body.device) ?? "another device"): adopted (generation \(theirs.body.generation ?? 0))")
                return
            }
            if serverChanged {
                for note in try vault.mergeEnvelope(base: base?.file, theirs: theirs) { say("warning: " + note) }
            }
            let merged = try vault.envelopeBytes()
            switch try put(merged, version: r.version) {
            case .stored(let v): return try setBase(merged, v)
            case .changed(let now): remote = now
            }
        }
        throw VaultError(.io, "the key envelope kept changing on the server while this device updated it", hint: "run `vault sync` again")
    }

    /// Whether the local keyslot file holds changes the server has not got.
    func isDirty() throws -> Bool {
        guard let base = try storedBase() else { return true }
        return !constantTimeEqual(try vault.envelopeBytes(), base.bytes)
    }

    static let plaintextAccount = VaultError(
        .conflict, "this account holds files but no key envelope: they were synced in plaintext by an older vault, and this vault will not mix end-to-end encrypted files with them",
        hint: "see SECURITY.md \"End to end: accounts synced in plaintext\": log in to a new (empty) account, or move the old files off this one first; nothing was changed")

    // MARK: Base

    func storedBase() throws -> (file: KeyslotFile, bytes: [UInt8], version: Int64)? {
        let s = try vault.syncState([.envelopeBase, .envelopeVersion])
        guard let text = s[.envelopeBase], let version = s[.envelopeVersion].flatMap(Int64.init),
              let file = try? KeyslotFile.parse(Array(text.utf8)) else { return nil }
        return (file, Array(text.utf8), version)
    }

    func setBase(_ bytes: [UInt8], _ version: Int64) throws {
        try vault.setSyncState([(.envelopeBase, String(decoding: bytes, as: UTF8.self)), (.envelopeVersion, String(version))])
    }

    // MARK: Requests

    enum Fetched {
        case unchanged
        case missing
        case found(Remote)
    }

    /// `GET /v1/keys/envelope` (with `If-None-Match` when this device is in step, so an
    /// unchanged envelope costs a 304).
    func fetch(ifNoneMatch version: Int64? = nil) throws -> Fetched {
        let r = try call { try api.json(.get, "/v1/keys/envelope", headers: version.map { [("If-None-Match", "\"\($0)\"")] } ?? []) }
        switch r.status {
        case 200: return .found(try Self.remote(r))
        case 304: return .unchanged
        case 404: return .missing
        default: throw ServerAPI.statusError(r, doing: "read the key envelope")
        }
    }

    enum PutResult {
        case stored(Int64)
        /// 412: another device changed it first; the server's current one.
        case changed(Remote)
    }

    /// `PUT /v1/keys/envelope`: create (`version` nil: `If-None-Match: *`) or replace `version`.
    func put(_ bytes: [UInt8], version: Int64?) throws -> PutResult {
        let body = PutKeyEnvelope(envelope: String(decoding: bytes, as: UTF8.self))
        let r = try call { try api.json(.put, "/v1/keys/envelope", body: body,
                                        headers: [version.map { ("If-Match", "\"\($0)\"") } ?? ("If-None-Match", "*")]) }
        switch r.status {
        case 200, 201: return .stored(try Self.remote(r).version)
        case 412: return .changed(try Self.remote(r))
        default: throw ServerAPI.statusError(r, doing: "upload the key envelope")
        }
    }

    /// Whether the account holds any live file or folder (`scope=all`, one entry).
    func accountHasFiles() throws -> Bool {
        let r = try call { try api.json(.get, "/v1/files?scope=all&pageSize=1") }
        guard r.status == 200 else { throw ServerAPI.statusError(r, doing: "list the account's files") }
        return !(try ServerAPI.decode(FileList.self, r).files.isEmpty)
    }

    static func remote(_ r: HTTPResponse) throws -> Remote {
        let e = try ServerAPI.decode(KeyEnvelope.self, r)
        return Remote(bytes: Array(e.envelope.utf8), version: e.version)
    }

    /// A small call, retried with backoff like every metadata call; a server that stays away
    /// is an I/O error (the caller decides whether an offline device goes on).
    private func call(_ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        try api.retrying(retry, say: say, body)
    }
}
