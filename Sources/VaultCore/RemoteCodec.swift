import Foundation
import VaultCrypto
import VaultPrimitives

/// The one seam where remote names and records are sealed and opened (SECURITY.md "End to end").
/// Everything the server stores about a node passes through here; the sync layer above sees only
/// plaintext `RemoteNode`s, and every way a server can lie about one is an integrity error.
public final class RemoteCodec: @unchecked Sendable {
    /// Remote ids are 32 lowercase hex, or `root`.
    public static let rootId = "root"

    let vaultIdHex: String
    let epochs: EpochKeys
    // SAFETY: `metaKeys` is read and written only with `metaKeyLock` held.
    private var metaKeys: [UInt32: AESGCMKey] = [:]
    private let metaKeyLock = NSLock()
    var current: KeyHierarchy { epochs.current }

    init(epochs: EpochKeys) {
        self.epochs = epochs
        vaultIdHex = epochs.keyslots.body.vaultId
    }

    /// A codec for the vault whose keyslot file (or envelope) is `keyslots` and whose master key
    /// of `keyslots.body.epoch` is `masterKey` (checked by the caller: the file's MAC verifies under it).
    public static func make(keyslots: KeyslotFile, masterKey: SecureBytes) throws -> RemoteCodec {
        let keys = try KeyHierarchy(masterKey: masterKey, vaultId: keyslots.vaultId, epoch: keyslots.body.epoch)
        return RemoteCodec(epochs: EpochKeys(keyslots: keyslots, keys: keys, masterKey: masterKey))
    }

    /// The epoch new tokens and records are sealed with.
    public var epoch: UInt32 { current.epoch }

    /// The keys of `epoch` (the current one, or an older one through the key history).
    public func keys(epoch: UInt32) throws -> KeyHierarchy { try epochs.keys(epoch: epoch) }

    /// The blob wrap key of `epoch`, for content sealed under it.
    public func blobWrapKey(epoch: UInt32) throws -> SecureBytes { try epochs.blobWrapKey(epoch: epoch) }

    /// The vault id (16 bytes).
    public var vaultId: [UInt8] { current.vaultId }

    /// A new remote id: 16 random bytes in hex.
    public static func newId() -> String { Hex.encode(SecureRandom.bytes(16)) }

    /// True for ids this format allows (`root` or 32 lowercase hex).
    public static func isValidId(_ id: String) -> Bool {
        id == rootId || (id.utf8.count == 32 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
    }

    // MARK: Names

    func nameAAD(parentId: String) -> [UInt8] { Array("vault-name-v1|\(vaultIdHex)|\(parentId)".utf8) }

    /// The name token of `name` in the folder `parentId`. Names are not normalised (SECURITY.md):
    /// the token seals the name's UTF-8 bytes exactly as the vault stores them.
    public func nameToken(_ name: String, parentId: String) throws -> String {
        let sealed = try AESSIV.seal(key: current.remoteNameKey, plaintext: Array(name.utf8),
                                     associatedData: [nameAAD(parentId: parentId)])
        return "\(current.epoch)." + Base64URL.encode(sealed)
    }

    /// The name a token holds, checked against the folder it is listed in.
    public func openName(_ token: String, parentId: String) throws -> String {
        let (epoch, bytes) = try Self.split(token, what: "name")
        let plain: [UInt8]
        do {
            plain = try AESSIV.open(key: try keys(epoch: epoch).remoteNameKey, sealed: bytes, associatedData: [nameAAD(parentId: parentId)])
        } catch let e as VaultError { throw e } catch {
            throw Self.lie("a name does not authenticate in the folder it is listed in (moved, swapped or forged by the server)")
        }
        guard let name = String(bytes: plain, encoding: .utf8), !name.utf8.contains(0) else { throw Self.lie("a name is not UTF-8") }
        return name
    }

    // MARK: Records

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder(); e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]; return e
    }()

    func recordAAD(_ kind: String, nodeId: String) -> [UInt8] { Array("vault-\(kind)-v1|\(vaultIdHex)|\(nodeId)".utf8) }

    private func seal<T: Encodable>(_ value: T, kind: String, nodeId: String) throws -> String {
        let nonce = SecureRandom.bytes(12)
        let sealed = try metaKey(epoch: current.epoch).seal(nonce: nonce, plaintext: Array(try Self.encoder.encode(value)),
                                                              aad: recordAAD(kind, nodeId: nodeId))
        return "\(current.epoch)." + Base64URL.encode(nonce + sealed)
    }

    private func open<T: FastRecordDecodable>(_ text: String, as: T.Type, kind: String, nodeId: String) throws -> T {
        let (epoch, bytes) = try Self.split(text, what: kind)
        guard bytes.count > 12 + 16 else { throw Self.lie("a \(kind) record is too short") }
        let key = try metaKey(epoch: epoch)
        let aad = recordAAD(kind, nodeId: nodeId)
        // The plaintext in a scratch buffer wiped after decoding (not a guarded SecureBytes: a
        // record's members become ordinary strings anyway, and two page mappings per record made
        // most of a large pull's system time).
        let count = bytes.count - 12 - 16
        let value: T? = try withUnsafeTemporaryAllocation(byteCount: max(count, 1), alignment: 1) { out in
            defer { out.initializeMemory(as: UInt8.self, repeating: 0) }
            do {
                _ = try bytes.withUnsafeBytes { b in
                    try aad.withUnsafeBytes { a in
                        try key.open(nonce: Array(b[..<12]), ciphertextAndTag: UnsafeRawBufferPointer(rebasing: b[12...]), aad: a, into: out)
                    }
                }
            } catch let e as VaultError { throw e } catch {
                throw Self.lie("the \(kind) record of \(nodeId) does not authenticate (swapped, altered or forged by the server)")
            }
            let plain = UnsafeRawBufferPointer(rebasing: out[..<count])
            return T.fastDecode(plain) ?? (try? JSONDecoder().decode(T.self, from: Data(plain)))
        }
        guard let value else { throw Self.lie("the \(kind) record of \(nodeId) is not valid") }
        return value
    }

    /// The AES-GCM key of the remote records of `epoch`, built once (its cipher contexts are
    /// reused for every record).
    func metaKey(epoch: UInt32) throws -> AESGCMKey {
        metaKeyLock.lock(); defer { metaKeyLock.unlock() }
        if let k = metaKeys[epoch] { return k }
        let k = try AESGCMKey(try keys(epoch: epoch).remoteMetaKey)
        metaKeys[epoch] = k
        return k
    }

    /// Seals a node record for `nodeId`.
    public func sealNode(_ record: NodeRecord, nodeId: String) throws -> String { try seal(record, kind: "meta", nodeId: nodeId) }

    /// Opens the node record of `nodeId`.
    public func openNode(_ text: String, nodeId: String) throws -> NodeRecord { try open(text, as: NodeRecord.self, kind: "meta", nodeId: nodeId) }

    /// Seals a content record for `nodeId`.
    public func sealContent(_ record: ContentRecord, nodeId: String) throws -> String { try seal(record, kind: "content", nodeId: nodeId) }

    /// Opens the content record of `nodeId` (a head or a revision).
    public func openContent(_ text: String, nodeId: String) throws -> ContentRecord {
        let r = try open(text, as: ContentRecord.self, kind: "content", nodeId: nodeId)
        guard r.v == 1, r.size >= 0, r.sealedSize > 0, Self.isValidId(r.blob), r.blob != Self.rootId,
              r.sha256.utf8.count == 64 else { throw Self.lie("the content record of \(nodeId) is not valid") }
        return r
    }

    // MARK: Nodes

    /// Opens and cross-checks everything the server says about one node: the record is bound to
    /// the id, names the parent the server lists it under and the same type, and its name is the
    /// one the token holds in that folder; a file's content record is bound to the id and the
    /// server stores at least the sealed size.
    public func open(_ e: SealedRemoteEntry) throws -> RemoteNode {
        do { return try openEntry(e) } catch let u as Unauthenticated { throw u.error }
    }

    /// Opens one node as `open(_:)` does, except that a node whose own record is missing or does
    /// not authenticate (no device of this vault wrote it) is refused, not thrown, so a pull can
    /// apply the rest. A lie about an authentic node (its place, name, type or content) still
    /// throws: the rest of the tree may depend on it.
    public func openOrRefuse(_ e: SealedRemoteEntry) throws -> OpenedEntry {
        do { return .node(try openEntry(e)) } catch let u as Unauthenticated {
            return .refused(RefusedNode(id: e.id, reason: u.error.message))
        }
    }

    /// A node's own record is missing or does not open under this vault's keys (`openOrRefuse`).
    private struct Unauthenticated: Error { let error: VaultError }

    private func openEntry(_ e: SealedRemoteEntry) throws -> RemoteNode {
        guard Self.isValidId(e.id) else { throw Self.lie("the server listed a node with an invalid id") }
        if e.id == Self.rootId {
            return RemoteNode(id: e.id, parentId: nil, name: "", isFolder: true, version: e.version, trashed: false,
                              record: nil, content: nil, storedSize: 0)
        }
        guard let parent = e.parentId, Self.isValidId(parent) else { throw Self.lie("node \(e.id) has no valid parent") }
        guard let meta = e.meta else {
            throw Unauthenticated(error: VaultError(.integrity, "node \(e.id) on the server is not end-to-end encrypted",
                                                    hint: "this account holds files synced in plaintext by an older vault (see SECURITY.md \"End to end\": migration)"))
        }
        let record: NodeRecord
        do { record = try openNode(meta, nodeId: e.id) } catch let v as VaultError where v.kind == .integrity { throw Unauthenticated(error: v) }
        guard record.v == 1 else { throw Unauthenticated(error: Self.lie("node \(e.id) has a record of an unknown version")) }
        guard record.parent == parent else { throw Self.lie("node \(e.id) is listed in another folder than the one it was put in") }
        guard record.isFolder == e.isFolder else { throw Self.lie("node \(e.id) is listed with another type") }
        // Byte for byte: Swift's `==` would take two Unicode spellings of a name for one.
        guard Array(try openName(e.name, parentId: parent).utf8) == Array(record.name.utf8) else {
            throw Self.lie("node \(e.id) is listed under another node's name")
        }
        var content: ContentRecord?
        if !e.isFolder {
            guard let cm = e.contentMeta else { throw Self.lie("file \(e.id) has no content record") }
            let c = try openContent(cm, nodeId: e.id)
            try Self.checkStoredSize(e.size, of: c, nodeId: e.id)
            content = c
        }
        return RemoteNode(id: e.id, parentId: parent, name: record.name, isFolder: e.isFolder, version: e.version,
                          trashed: e.trashed, record: record, content: content, storedSize: e.size)
    }

    /// The server stores exactly the sealed size, or its Padmé size (padding on), and the sealed
    /// size is that of the record's plaintext: any other size is a lie about the file.
    public static func checkStoredSize(_ stored: Int64, of c: ContentRecord, nodeId: String) throws {
        guard c.sealedSize == Int64(BlobStore.sealedSize(plaintextSize: UInt64(c.size))) else {
            throw lie("the content record of \(nodeId) gives a sealed size that does not fit its plaintext size")
        }
        let z = UInt64(c.sealedSize)
        guard stored == Int64(z) || stored == Int64(RemotePadding.padme(z)) else {
            throw lie("file \(nodeId) is listed with \(stored) bytes where its content is \(z) bytes (\(RemotePadding.padme(z)) padded)")
        }
    }

    // MARK: Sealing what an outbox entry sends

    /// The name token and node record of a node, as a create or a move sends them.
    public struct SealedNode: Sendable, Equatable {
        /// The name token (the server's `name`).
        public var name: String
        /// The node record (the server's `meta`).
        public var meta: String
    }

    /// Seals what the server stores about node `nodeId` named `name` in server folder `parentId`:
    /// its name token under that folder, and its node record with sequence number `seq` (the name's
    /// bytes as stored, not normalised).
    public func sealNode(nodeId: String, name: String, parentId: String, isFolder: Bool, seq: Int64,
                         device: String, deviceName: String?, mtime: Int64) throws -> SealedNode {
        SealedNode(name: try nameToken(name, parentId: parentId),
                   meta: try sealNode(NodeRecord(device: device, deviceName: deviceName, mtime: mtime, name: name, parent: parentId, seq: seq,
                                                 isFolder: isFolder),
                                      nodeId: nodeId))
    }

    // MARK: The envelope's device name

    func deviceAAD() -> [UInt8] { Array("vault-device-v1|\(vaultIdHex)".utf8) }

    /// The envelope's `device` member: this device's name sealed under the current epoch, so the
    /// server does not learn it and a device at this epoch can say who changed the envelope.
    public func sealDeviceLabel(_ name: String) throws -> String {
        let nonce = SecureRandom.bytes(12)
        let sealed = try metaKey(epoch: current.epoch).seal(nonce: nonce, plaintext: Array(name.utf8), aad: deviceAAD())
        return "\(current.epoch)." + Base64URL.encode(nonce + sealed)
    }

    /// The device name in an envelope's `device` member, or nil when this device cannot open it
    /// (absent, of an epoch it does not know, or altered).
    public func openDeviceLabel(_ text: String?) -> String? {
        guard let text, let (epoch, bytes) = try? Self.split(text, what: "device"), bytes.count > 28,
              let key = try? metaKey(epoch: epoch),
              let plain = try? key.open(nonce: Array(bytes[..<12]), ciphertextAndTag: Array(bytes[12...]), aad: deviceAAD()),
              let name = plain.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else { return nil }
        return DisplayText.escaped(name)
    }

    // MARK: Helpers

    /// The integrity error for something the server says that cannot be true.
    public static func lie(_ what: String) -> VaultError {
        VaultError(.integrity, "the server's data failed its integrity check: \(what)",
                   hint: "nothing was applied on this device; the server may be faulty or malicious")
    }

    /// Splits `<epoch>.<base64url>`.
    static func split(_ text: String, what: String) throws -> (UInt32, [UInt8]) {
        guard let dot = text.firstIndex(of: "."), let epoch = UInt32(text[..<dot]), epoch > 0,
              let bytes = Base64URL.decode(String(text[text.index(after: dot)...])) else {
            throw lie("a \(what) is not in the vault's format")
        }
        return (epoch, bytes)
    }
}
