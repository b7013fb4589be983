import Foundation
import XCTest
import VaultCore
import VaultCrypto

/// A fresh vault in a temp folder, opened in-process with a fast KDF.
class VaultTestCase: XCTestCase {
    var dir: URL!
    var layout: VaultLayout!
    var vault: Vault!
    let password = SecureBytes(copying: Array("unit test password".utf8))

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vaultcore-\(UUID().uuidString)")
        layout = VaultLayout(root: dir.appendingPathComponent("v").path)
        vault = try Vault.create(layout: layout, password: password,
                                 kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
    }

    override func tearDownWithError() throws {
        vault = nil
        try? FileManager.default.removeItem(at: dir)
    }

    /// A local file with `size` bytes of a repeating pattern.
    func file(_ name: String, size: Int, seed: UInt8 = 1) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0) &+ seed }).write(to: url)
        return url.path
    }

    /// Puts a file and marks it uploaded, so its content is cached (evictable) content.
    @discardableResult
    func cachedFile(_ path: String, size: Int) throws -> Node {
        let n = try vault.put(localFile: try file(UUID().uuidString, size: size), to: path)
        try vault.markUploaded(nodeId: n.id, remoteId: "r-" + n.id, version: 1)
        return try vault.node(id: n.id)!
    }
}
