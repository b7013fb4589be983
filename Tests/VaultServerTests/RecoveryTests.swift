import XCTest
import VaultSQL

/// Crash windows the `kill -9` test cannot hit on purpose, recreated on disk and then recovered
/// by a restart.
final class RecoveryTests: XCTestCase {
    /// A publish that renamed the part file into `content/` but died before its transaction
    /// committed: the restart moves the bytes back and the session still completes.
    func testUncommittedPublishIsRolledBackAtStart() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        try XCTSkipIf(s.bucket != nil, "moves the data folder's files (on S3: S3ContentTests)")
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(2500)
        let id = try u.startSession(name: "r.bin", bytes: bytes).json["uploadId"] as! String
        XCTAssertEqual(try u.putChunk(id, bytes, 0, 1000).status, 308)
        XCTAssertEqual(try u.putChunk(id, bytes, 1000, 2000).status, 308)
        XCTAssertEqual(s.stop(), 0)

        let d = s.dataDir + "/d"
        let rid = try s.metadataConnection().scalar("SELECT revision_id FROM uploads WHERE id = ?", [id])?.string
        let revisionId = try XCTUnwrap(rid)
        try FileManager.default.moveItem(atPath: "\(d)/uploads/\(id).part", toPath: "\(d)/content/\(revisionId)")
        FileManager.default.createFile(atPath: "\(d)/content/orphan", contents: Data([1, 2, 3]))
        FileManager.default.createFile(atPath: "\(d)/uploads/stray.part", contents: Data([1]))
        FileManager.default.createFile(atPath: "\(d)/tmp/half-upload", contents: Data([1]))
        // With PostgreSQL metadata the folder may be shared by live servers: recovery touches only
        // files left alone for 10 minutes (another server may be between its rename and commit).
        let crashed = ["content/\(revisionId)", "content/orphan", "uploads/stray.part"]
        for f in crashed {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: "\(d)/\(f)")
        }
        let fresh = "\(d)/content/being-published"
        if s.metadata != nil { FileManager.default.createFile(atPath: fresh, contents: Data([4])) }

        try s.start()
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(d)/uploads/\(id).part"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: "\(d)/content"), s.metadata == nil ? [] : ["being-published"],
                       "leftovers removed; on PostgreSQL a fresh file is left to the server that may be writing it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(d)/uploads/stray.part"))
        XCTAssertEqual(s.tempFiles, [], "the stale temp is gone, and no instance left one")
        let after = try APIUser(s, "alice")
        XCTAssertTrue((try after.send("GET", "/v1/files").json["files"] as! [Any]).isEmpty)
        let done = try after.putChunk(id, bytes, 2000, 2500)
        XCTAssertEqual(done.status, 201)
        XCTAssertEqual(try after.send("GET", "/v1/files/\(done.json["id"] as! String)/content").body, bytes)
    }
}

/// HTTPS with a certificate and key.
final class TLSTests: XCTestCase {
    func testServesHTTPS() throws {
        let dir = NSTemporaryDirectory() + "vault-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        gen.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir + "/key.pem",
                         "-out", dir + "/cert.pem", "-days", "1", "-subj", "/CN=127.0.0.1"]
        gen.standardError = FileHandle.nullDevice; gen.standardOutput = FileHandle.nullDevice
        guard (try? gen.run()) != nil else { throw XCTSkip("openssl is not installed") }
        gen.waitUntilExit()
        let s = try ServerProcess(args: ["--tls-cert", dir + "/cert.pem", "--tls-key", dir + "/key.pem"])
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-sk", "-X", "POST", "https://127.0.0.1:\(s.port)/v1/auth/token",
                          "-d", #"{"username":"alice","password":"pw-alice"}"#]
        let out = Pipe(); curl.standardOutput = out
        try curl.run()
        let body = out.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        XCTAssertTrue(String(decoding: body, as: UTF8.self).contains("\"token\""))
        XCTAssertThrowsError(try s.client.send("GET", "/v1/files", timeout: 3), "plain HTTP is not served")
    }
}
