import Foundation
import VaultArguments
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The `vault-server` program: `serve` and `user …`. `main.swift` only calls `run`.
public enum VaultServerMain {
    /// Runs the command in `arguments` (without the program name) and returns the exit code.
    public static func run(_ arguments: [String]) -> Int32 {
        Sodium.initialize()
        umask(0o077)
        let command: ServerCommand
        do {
            command = try ServerCommand.parse(arguments)
        } catch {
            FileHandle.standardError.write(Data("\(error.description)\nUsage: \(HelpGenerator.usage(error.commandPath))\nSee '\(error.commandPath.displayName) --help'.\n".utf8))
            return 2
        }
        do {
            switch command {
            case .help(let text):
                FileHandle.standardOutput.write(Data(text.utf8))
                return 0
            case .version(let v):
                print(v)
                return 0
            case .user(let dataDir, let metadata, let command, let content):
                return try UserCommands(dataDir: dataDir, metadata: metadata, content: content).run(command)
            case .migrate(let location, let content):
                let version = try MetadataStore(location).schemaVersion
                print("\(location): metadata schema version \(version)")
                if let content {
                    let s3 = S3Client(try S3Location(url: content))
                    try s3.createBucket()
                    print("\(s3.location): bucket ready")
                }
                return 0
            case .export(let dataDir, let location, let content, let bundle):
                let store = try ContentLocation.open(content, dataDir: dataDir, instance: nil)
                let m = try StoreMove.export(dataDir: dataDir, location: location, content: store, to: bundle)
                if m.uploadsLeft > 0 { print("left \(m.uploadsLeft) unfinished upload(s) in the object store: their clients start them again") }
                print("exported \(m.rows["users"] ?? 0) users, \(m.rows["files"] ?? 0) files, \(m.rows["revisions"] ?? 0) revisions and \(m.rows["changes"] ?? 0) changes from \(location) to \(bundle)")
                return 0
            case .import(let dataDir, let location, let content, let bundle):
                let store = try ContentLocation.open(content, dataDir: dataDir, instance: nil)
                let m = try StoreMove.import(dataDir: dataDir, location: location, content: store, from: bundle)
                if m.uploadsLeft > 0 { print("left \(m.uploadsLeft) unfinished upload(s) out: an object store takes no part files, so their clients start them again") }
                print("imported \(m.rows["users"] ?? 0) users, \(m.rows["files"] ?? 0) files, \(m.rows["revisions"] ?? 0) revisions and \(m.rows["changes"] ?? 0) changes from \(bundle) into \(location)")
                return 0
            case .serve(let config, let logRequests):
                return try serve(config, logRequests: logRequests)
            }
        } catch let error as APIError {
            FileHandle.standardError.write(Data("vault-server: \(error.message)\n".utf8))
            return 1
        } catch {
            FileHandle.standardError.write(Data("vault-server: \(error)\n".utf8))
            return 1
        }
    }

    private static func serve(_ config: ServerConfig, logRequests: Bool) throws -> Int32 {
        // Signals are taken synchronously by the main thread; every other thread inherits the mask.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM); sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)   // a write past `ulimit -f` fails with EFBIG (413) instead of killing the server

        AccessLog.processInstance.withLock { $0 = config.instanceId }
        try FileSystem.makeDirectory(config.dataDir)
        let service = try VaultService(config: config)
        try service.recover()
        service.sweepExpiredUploads()
        var key: String?, cert: String?
        if let k = config.tlsKeyFile, let c = config.tlsCertFile {
            key = String(decoding: try FileSystem.readAll(k), as: UTF8.self)
            cert = String(decoding: try FileSystem.readAll(c), as: UTF8.self)
        }
        let server = try HTTPServer(service: service, log: AccessLog(enabled: logRequests, instance: config.instanceId),
                                    options: HTTPServerOptions(config: config, tlsKeyPEM: key, tlsCertPEM: cert))
        let port = try server.start()
        let sweeper = Thread { [service] in
            while !service.hub.isStopped {
                Thread.sleep(forTimeInterval: TimeInterval(service.config.sweepInterval))
                service.sweepExpiredUploads()
                service.cutOffRevokedStreams()
                service.sweepLoginThrottle()
                service.sweepContentIfDue()
            }
        }
        sweeper.start()
        if case .postgresql(let url) = config.metadataLocation {
            let doorbell = ChangeDoorbell(url: url, hub: service.hub) { [service] owner in
                try? service.store.withDB { db in try db.latestCursor(owner: owner) }
            }
            Thread { doorbell.run() }.start()
        }
        FileHandle.standardOutput.write(Data("listening on \(config.host):\(port)\n".utf8))
        AccessLog.message("vault-server \(config.instanceId) listening on \(config.host):\(port)\(key == nil ? "" : " (TLS)")")

        var sig: Int32 = 0
        sigwait(&set, &sig)
        AccessLog.message("signal \(sig): shutting down")
        service.hub.stop()
        server.stop()
        AccessLog.message("stopped")
        return 0
    }
}
