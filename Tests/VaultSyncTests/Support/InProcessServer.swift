import Foundation
import VaultAPI
@testable import VaultServer

/// The reference server in this process, on 127.0.0.1 (a port the system picks), with a
/// throwaway data folder and its test faults on; user `alice` with password `pw-alice`.
final class InProcessServer {
    let dataDir: String
    let service: VaultService
    private let server: HTTPServer
    let port: UInt16

    init(chunkSize: Int64 = 64 << 10) throws {
        Sodium.initialize()
        var config = ServerConfig()
        config.dataDir = NSTemporaryDirectory() + "vault-sync-test-" + UUID().uuidString
        config.port = 0
        config.testFaults = true
        config.chunkSize = chunkSize
        config.idleTimeout = 5
        dataDir = config.dataDir
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        service = try VaultService(config: config)
        try service.recover()
        _ = try service.users.add(name: "alice", password: Array("pw-alice".utf8))
        server = try HTTPServer(service: service, log: AccessLog(enabled: false),
                                options: HTTPServerOptions(config: config, tlsKeyPEM: nil, tlsCertPEM: nil))
        port = try server.start()
    }

    /// Applies `faults` to the requests that arrive from now on.
    func faults(_ faults: FaultSettings) { service.faults.set(faults) }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: dataDir)
    }
}
