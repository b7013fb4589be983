import Foundation
import VaultTestSupport
import XCTest

/// What a `ServerHarness` stores, looked at and changed behind its back the same way whether it
/// is the embedded server (the data folder) or a deployment (PostgreSQL and an S3 bucket too).
extension ServerHarness {
    /// The bucket of `content` (nil: content in the data folder).
    var bucket: String? { content.flatMap { URLComponents(string: $0)?.host } }

    /// Folders that hold every byte the server stores, for a test that looks for plaintext in
    /// them: the data folder and, for stores outside it, a new folder with a dump of the
    /// PostgreSQL database (`pg_dump`) and a copy of every object of the bucket.
    func storedFolders() throws -> [URL] {
        guard metadata != nil || bucket != nil else { return [dataDir] }
        let dump = dataDir.deletingLastPathComponent().appendingPathComponent("stores-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: dump, withIntermediateDirectories: true)
        if let metadata { try PostgresCluster.dump(metadata, to: dump.appendingPathComponent("metadata.sql").path) }
        if let bucket {
            let store = try SeaweedS3.shared()
            // `readyz/INSTANCE` is each instance's readiness probe (a fixed text), written and
            // deleted by every health check: listed one moment, gone the next.
            for key in try store.objectKeys(bucket: bucket) where !key.hasPrefix("readyz/") {
                let file = dump.appendingPathComponent("objects/" + key)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(try store.object(bucket: bucket, key: key)).write(to: file)
            }
        }
        return [dataDir, dump]
    }

    /// Flips byte `offset` of revision `revisionId`'s stored content (its file, or its object).
    func damageStoredContent(revision revisionId: String, at offset: Int) throws {
        if let bucket {
            let store = try SeaweedS3.shared(), key = "content/" + revisionId
            var bytes = try store.object(bucket: bucket, key: key)
            bytes[offset] ^= 0x55
            try store.putObject(bucket: bucket, key: key, bytes: bytes)
        } else {
            let stored = dataDir.appendingPathComponent("content/\(revisionId)")
            var bytes = try Data(contentsOf: stored)
            bytes[offset] ^= 0x55
            try bytes.write(to: stored)
        }
    }

    /// A data folder of the embedded form with everything the server stores now, for the
    /// independent decoder (which reads `meta.db` and `content/`): the data folder itself, or
    /// for stores outside it a store move as an operator makes it (every instance stopped,
    /// `export`, `import` into a new folder, the instances started again on the same stores).
    func embeddedCopy() throws -> URL {
        guard metadata != nil || bucket != nil else { return dataDir }
        let copy = dataDir.deletingLastPathComponent().appendingPathComponent("embedded-" + UUID().uuidString)
        try stopped { try copyStore(into: copy, []) }
        return copy
    }
}

extension PostgresCluster {
    /// `pg_dump` of the database at `url` (plain SQL) into `path`.
    static func dump(_ url: String, to path: String) throws {
        let r = try toolOutput(binDir + "/pg_dump", ["--no-owner", "-f", path, url])
        guard r.status == 0 else { throw PostgresClusterError("pg_dump failed: \(r.output)") }
    }
}
