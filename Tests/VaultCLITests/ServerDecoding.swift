import Foundation
@testable import VaultCore
@testable import VaultKeys
import VaultCrypto
import VaultPrimitives
import XCTest

/// Reads what the server stores for a vault the way a device would (SECURITY.md "End to end"):
/// the vault's codec, opened in-process from its keyslot file and the test password, turns name
/// tokens and records back into names, sizes and checksums, so the tests that inspect the server
/// keep checking the same things now that it holds only ciphertext.
final class ServerDecoder: @unchecked Sendable {
    let home: URL
    let password: String

    init(home: URL, password: String = CLIHarness.password) {
        self.home = home; self.password = password
    }

    /// The codec of the vault as it is now (re-read each time: a rotation changes it).
    func codec() throws -> RemoteCodec {
        let bytes = [UInt8](try Data(contentsOf: home.appendingPathComponent("keyslots")))
        let file = try KeyslotFile.parse(bytes)
        let master = try file.unlock(password: SecureBytes(copying: Array(password.utf8)))
        return try RemoteCodec.make(keyslots: file, masterKey: master)
    }

    /// The codec, or nil when there is no vault at `home` (yet).
    func codecIfAny() throws -> RemoteCodec? {
        FileManager.default.fileExists(atPath: home.appendingPathComponent("keyslots").path) ? try codec() : nil
    }

    /// `f` (a file resource from the API) with its name, size and SHA-256 decoded: `name` the
    /// real name, `size` and `sha256` the plaintext's (the server's own are kept as
    /// `storedSize` and `storedSHA256`).
    func decode(_ f: [String: Any], codec: RemoteCodec) throws -> [String: Any] {
        var out = f
        guard f["meta"] != nil else { return f }   // not end-to-end (made by a test through the API)
        let id = f["id"] as? String ?? ""
        let entry = SealedRemoteEntry(id: id, parentId: f["parentId"] as? String, name: f["name"] as? String ?? "",
                                      isFolder: f["type"] as? String == "folder", size: (f["size"] as? NSNumber)?.int64Value ?? 0,
                                      version: (f["version"] as? NSNumber)?.int64Value ?? 0, trashed: f["trashed"] as? Bool ?? false,
                                      meta: f["meta"] as? String, contentMeta: f["contentMeta"] as? String)
        let node = try codec.open(entry)
        out["name"] = node.name
        out["storedSize"] = f["size"]
        out["storedSHA256"] = f["sha256"]
        if let c = node.content {
            out["size"] = NSNumber(value: c.size)
            out["sha256"] = c.sha256
            out["sealedSize"] = NSNumber(value: c.sealedSize)
            out["blob"] = c.blob
        }
        return out
    }

    /// The plaintext SHA-256 of sealed content `bytes` described by `contentMeta` of node `id`:
    /// every segment authenticated (the first `sealedSize` bytes; the rest must be zero padding).
    func plaintextSHA256(of bytes: Data, contentMeta: String, id: String) throws -> String {
        let codec = try codec()
        let c = try codec.openContent(contentMeta, nodeId: id)
        let z = Int(c.sealedSize)
        guard bytes.count >= z, bytes[z...].allSatisfy({ $0 == 0 }) else { throw TransferTestError("content of \(id) is not its sealed size plus zero padding") }
        let v = try SealedStreamVerifier(expectedLength: UInt64(z), expectedVaultId: codec.vaultId, expectedBlobId: Hex.decode(c.blob) ?? [],
                                         wrapKey: codec.blobWrapKey(epoch:))
        try v.feed([UInt8](bytes.prefix(z)))
        let (size, digest) = try v.finish()
        guard size == UInt64(c.size) else { throw TransferTestError("content of \(id) is \(size) bytes, its record says \(c.size)") }
        return Hex.encode(digest)
    }
}

extension ServerHarness {
    /// A PATCH as another device of this vault would send it: `name` sealed under server folder
    /// `parentId` with a node record (sequence number `seq`), against `version`.
    func patchSealed(_ id: String, name: String, parentId: String, isFolder: Bool = false, seq: Int64 = 1000,
                     version: Int) throws -> Answer {
        let sealed = try decoder!.codec().sealNode(nodeId: id, name: name, parentId: parentId, isFolder: isFolder, seq: seq,
                                                   device: "another-device", deviceName: nil, mtime: 1_700_000_000)
        let body = try JSONSerialization.data(withJSONObject: ["name": sealed.name, "parentId": parentId, "meta": sealed.meta])
        return try curl("PATCH", "/v1/files/\(id)", json: String(decoding: body, as: UTF8.self), headers: ["If-Match": "\"\(version)\""])
    }
}

extension CLIHarness {
    /// A decoder of what the server stores for this harness's vault.
    var decoder: ServerDecoder { ServerDecoder(home: home) }
}
