import Foundation
import XCTest
import VaultAPI
@testable import VaultCore
@testable import VaultSync
import VaultCrypto
import VaultPrimitives
import VaultTestSupport

/// A fresh vault logged in to an in-process reference server through a `CuttingProxy`, and a
/// seeded source of file contents (the seed is printed; `VAULT_TEST_SEED` replays it).
class SyncTestCase: XCTestCase {
    var server: InProcessServer!
    var proxy: CuttingProxy!
    var dir: URL!
    var vault: Vault!
    var random: SeededGenerator!
    private let heardLock = NSLock()
    private var heardLines: [String] = []
    /// The server's chunk size.
    static let chunk = 64 << 10

    override func setUpWithError() throws {
        random = SeededGenerator(test: self.name)
        server = try InProcessServer(chunkSize: Int64(Self.chunk))
        proxy = try CuttingProxy(to: server.port)
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vaultsync-\(UUID().uuidString)")
        vault = try Vault.create(layout: VaultLayout(root: dir.appendingPathComponent("v").path),
                                 password: SecureBytes(copying: Array("unit test password".utf8)),
                                 kdf: .argon2id(opsLimit: 1, memLimitBytes: 8 << 20, salt: SecureRandom.bytes(16)))
        try SyncClient.login(vault: vault, serverURL: "http://127.0.0.1:\(proxy.port)", user: "alice",
                             password: SecureBytes(copying: Array("pw-alice".utf8)), caFile: nil, policy: .none)
    }

    override func tearDown() {
        vault = nil
        proxy?.stop()
        server?.stop()
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// A client of the logged-in vault with a fast backoff of `maxAttempts` tries; what it says
    /// is kept (`heard`).
    func client(maxAttempts: Int = 8) throws -> SyncClient {
        let stored = try SyncClient(vault: vault, policy: .none)
        var retry = RetryPolicy(base: 0.002, cap: 0.02)
        retry.maxAttempts = maxAttempts
        return SyncClient(api: stored.api, vault: vault, policy: .none, retry: retry) { [weak self] line in
            guard let self else { return }
            heardLock.withLock { heardLines.append(line) }
        }
    }

    /// What the clients said (retry notes, resumed downloads).
    var heard: [String] { heardLock.withLock { heardLines } }

    /// A file of `size` seeded random bytes put at `/name`: its node and its bytes.
    func put(_ name: String, size: Int) throws -> (Node, [UInt8]) {
        let bytes = random.bytes(size)
        let source = dir.appendingPathComponent(name)
        try Data(bytes).write(to: source)
        return (try vault.put(localFile: source.path, to: "/" + name), bytes)
    }

    /// A file uploaded and evicted: its content is only on the server.
    func remoteOnly(_ name: String, size: Int) throws -> (Node, [UInt8]) {
        let (n, bytes) = try put(name, size: size)
        _ = try client().push(concurrency: 1)
        _ = try vault.evict(paths: ["/" + name])
        let node = try XCTUnwrap(try vault.node(id: n.id))
        XCTAssertEqual(node.contentState, .notDownloaded)
        return (node, bytes)
    }

    /// The plaintext of `node` as this device holds it.
    func content(_ node: Node) throws -> [UInt8] {
        var out: [UInt8] = []
        _ = try vault.readContent(node) { out.append(contentsOf: $0) }
        return out
    }

    /// What the server says it received for upload session `id` (every byte, re-sent ones too).
    func bytesReceived(_ id: String, _ client: SyncClient) throws -> Int {
        let r = try client.api.json(.get, "/v1/upload/\(id)")
        let object = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        return try XCTUnwrap(object?["bytesReceivedTotal"] as? Int, "upload status: \(r.status)")
    }
}
