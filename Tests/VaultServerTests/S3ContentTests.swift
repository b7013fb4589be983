import Foundation
import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import VaultServer

/// Content in an S3 object store (`--content s3://…`, issue 22) against a real SeaweedFS the
/// test process starts (`SeaweedS3`): multipart uploads across a `kill -9`, the store going
/// down, the sweep after many killed uploads, ranged downloads. (The whole server suite also
/// runs on S3 with `VAULT_TEST_CONTENT=s3`, scripts/test.sh.)
final class S3ContentTests: XCTestCase {
    /// A server whose content is in a fresh bucket of `store` (default: the shared one).
    private func s3Server(_ args: [String] = [], store: SeaweedS3? = nil) throws -> (ServerProcess, SeaweedS3) {
        try XCTSkipUnless(SeaweedS3.available, SeaweedS3.unavailableMessage)
        let store = try store ?? SeaweedS3.shared()
        return (try ServerProcess(args: args, content: .some(try store.makeBucket())), store)
    }

    static let fiveMiB = 5 << 20

    /// Chunks at S3's 5 MiB minimum are parts of one multipart upload: half of chunk 1 is in
    /// flight when the server is killed; the restarted server keeps chunk 0 (a part of the
    /// store's upload), the client sends the rest, and the file's SHA-256 matches.
    func testResumableUploadAcrossKill9IsOneMultipartUpload() throws {
        let (s, store) = try s3Server(["--max-chunk", String(Self.fiveMiB)])
        let bucket = try XCTUnwrap(s.bucket)
        let u = try APIUser(s, "alice")
        let size = 2 * Self.fiveMiB + 12345
        let bytes = randomBytes(size)
        let id = try u.startSession(name: "big.bin", bytes: bytes).json["uploadId"] as! String
        XCTAssertEqual(try u.putChunk(id, bytes, 0, Self.fiveMiB).status, 308)
        XCTAssertEqual(try store.multipartUploads(bucket: bucket).count, 1, "the session is one multipart upload")

        let c = s.client
        let fd = try c.connect()
        defer { close(fd) }
        try c.writeAll(fd, c.requestHead("PUT", "/v1/upload/\(id)/chunk", headers: [
            "Authorization": "Bearer \(u.token)", "Content-Range": "bytes \(Self.fiveMiB)-\(2 * Self.fiveMiB - 1)/\(size)",
        ], bodyLength: Self.fiveMiB) + Array(bytes[Self.fiveMiB..<(Self.fiveMiB + 2_000_000)]))
        try waitUntil("the half chunk to reach the server") { !s.tempFiles.isEmpty }
        usleep(200_000)
        s.kill9()
        try s.start()

        let after = try APIUser(s, "alice")
        let status = try after.send("GET", "/v1/upload/\(id)")
        XCTAssertEqual(status.json["chunksProcessed"] as? Int, 1, "the killed chunk does not count: \(status.text)")
        XCTAssertEqual(try after.putChunk(id, bytes, 2 * Self.fiveMiB, size).status, 308)
        let done = try after.putChunk(id, bytes, Self.fiveMiB, 2 * Self.fiveMiB)
        XCTAssertEqual(done.status, 201, done.text)
        let fid = try XCTUnwrap(done.json["id"] as? String)
        XCTAssertEqual(sha256Hex(try after.send("GET", "/v1/files/\(fid)/content").body), sha256Hex(bytes))
        XCTAssertEqual(try store.multipartUploads(bucket: bucket), [], "completed")
        XCTAssertEqual(try store.objectKeys(bucket: bucket), ["content/\(try XCTUnwrap(done.json["headRevisionId"] as? String))"],
                       "one object: the revision (no kept prefix, no staged chunk left)")
    }

    /// The object store goes down: uploads and downloads answer 503 `content_store_unavailable`
    /// and nothing is committed; once it is back, the same requests succeed.
    func testStoreDownIs503AndNothingIsCommitted() throws {
        try XCTSkipUnless(SeaweedS3.available, SeaweedS3.unavailableMessage)
        let store = try SeaweedS3()   // its own: this test stops it
        defer { store.stop() }
        let (s, _) = try s3Server(["--max-chunk", "1000"], store: store)
        let u = try APIUser(s, "alice")
        let kept = try u.upload("kept.bin", Array("kept".utf8))["id"] as! String
        let bytes = randomBytes(2500)
        let sid = try u.startSession(name: "r.bin", bytes: bytes).json["uploadId"] as! String
        XCTAssertEqual(try u.putChunk(sid, bytes, 0, 1000).status, 308)
        let ready = try s.client.send("GET", "/readyz")
        XCTAssertEqual(ready.status, 200, ready.text)
        XCTAssertFalse(try store.objectKeys(bucket: try XCTUnwrap(s.bucket)).contains { $0.hasPrefix("readyz/") }, "the probe object is deleted")

        store.stopProcess()
        let started = Date()
        let notReady = try s.client.send("GET", "/readyz")
        XCTAssertEqual(notReady.status, 503, notReady.text)
        XCTAssertEqual(notReady.errorCode, "not_ready")
        XCTAssertTrue(notReady.text.contains("content store"), notReady.text)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the probe is bounded")
        let simple = try u.send("POST", "/v1/upload?uploadType=media&name=lost.bin", body: Array("lost".utf8))
        XCTAssertEqual(simple.status, 503, simple.text)
        XCTAssertEqual(simple.errorCode, "content_store_unavailable")
        let chunk = try u.putChunk(sid, bytes, 1000, 2000)
        XCTAssertEqual(chunk.status, 503, chunk.text)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(kept)/content").status, 503)
        let names = (try u.send("GET", "/v1/files").json["files"] as! [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(names, ["kept.bin"], "nothing half-committed")
        XCTAssertEqual(try u.send("GET", "/v1/upload/\(sid)").json["chunksProcessed"] as? Int, 1)

        try store.start()
        // SeaweedFS answers 500 for a while after a restart (its volume not yet registered): a 503 still.
        try waitUntil("the store to serve again") { try u.send("GET", "/v1/files/\(kept)/content").status != 503 }
        XCTAssertEqual(try u.send("GET", "/v1/files/\(kept)/content").body, Array("kept".utf8))
        try waitUntil("the instance to be ready again") { try s.client.send("GET", "/readyz").status == 200 }
        XCTAssertEqual(try u.putChunk(sid, bytes, 1000, 2000).status, 308)
        let done = try u.putChunk(sid, bytes, 2000, 2500)
        XCTAssertEqual(done.status, 201, done.text)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(done.json["id"] as! String)/content").body, bytes)
    }

    /// 50 uploads (one-shot, resumable in one chunk, resumable with multipart parts) cut
    /// off at random points, the server killed once in the middle; after the sessions expire
    /// and the sweep runs: no multipart upload, no kept prefix or staged chunk is left, the
    /// bucket's revision objects are exactly the committed revisions, and each committed file
    /// reads back with its SHA-256. `VAULT_S3_KILLED_UPLOADS` sets the count
    /// (scripts/bench-s3-sweep.sh: 1,000).
    func testKilledUploadsThenSweepLeaveNoOrphansAndNoDamage() throws {
        let (s, store) = try s3Server(["--max-chunk", String(Self.fiveMiB), "--test-faults", "--content-sweep-grace", "0",
                                       "--max-sessions", "100000"])
        let bucket = try XCTUnwrap(s.bucket)
        var rng = SeededGenerator(test: name)
        var u = try APIUser(s, "alice")
        var committed: [String: String] = [:]   // file id → sha256
        let count = ProcessInfo.processInfo.environment["VAULT_S3_KILLED_UPLOADS"].flatMap(Int.init) ?? 50
        for n in 0..<count {
            if n == count / 2 {
                s.kill9()
                try s.start()
                u = try APIUser(s, "alice")
            }
            let kind = n % 5
            let size = kind == 4 ? Self.fiveMiB + Int.random(in: 1...300_000, using: &rng) : Int.random(in: 1...30_000, using: &rng)
            let bytes = randomBytes(size, function: "upload \(n)")
            let finish = n % 4 == 0 || Int.random(in: 0..<3, using: &rng) == 0   // every fourth, and a third of the rest
            switch kind {
            case 0, 1:   // one-shot, finished or cut off mid-body
                if finish {
                    let f = try u.upload("simple-\(n)", bytes)
                    committed[f["id"] as! String] = sha256Hex(bytes)
                } else {
                    try cutOff(s, u, "POST", "/v1/upload?uploadType=media&name=cut-\(n)", total: size, sent: bytes.prefix(size / 2))
                }
            default:     // resumable: some chunks, maybe a cut-off one, maybe all of them
                let chunk = Self.fiveMiB   // the server's chunk size: a small file is one chunk
                let started = try u.startSession(name: "resumable-\(n)", bytes: bytes)
                let sid = try XCTUnwrap(started.json["uploadId"] as? String, started.text)
                let chunks = (size + chunk - 1) / chunk
                let upTo = finish ? chunks : Int.random(in: 0..<chunks, using: &rng)
                var last: TestResponse?
                for i in 0..<upTo where kind != 4 || i == 0 || finish {
                    last = try u.putChunk(sid, bytes, i * chunk, min(size, (i + 1) * chunk))
                }
                if finish {
                    let last = try XCTUnwrap(last)
                    XCTAssertEqual(last.status, 201, "upload \(n): \(last.text)")
                    if last.status == 201 { committed[last.json["id"] as! String] = sha256Hex(bytes) }
                } else if upTo < chunks {
                    let start = upTo * chunk, end = min(size, start + chunk)
                    try cutOff(s, u, "PUT", "/v1/upload/\(sid)/chunk", total: end - start, sent: bytes[start..<(start + (end - start) / 2)],
                               headers: ["Content-Range": "bytes \(start)-\(end - 1)/\(size)"])
                }
            }
        }
        XCTAssertGreaterThanOrEqual(committed.count, count / 4)
        // Every open session expires; the sweep runs with no grace.
        XCTAssertEqual(try u.json("POST", "/v1/test/faults", ["expireSessionsNow": true]).status, 200)

        XCTAssertEqual(try store.multipartUploads(bucket: bucket), [], "0 orphaned multipart uploads")
        XCTAssertEqual(try store.objectKeys(bucket: bucket, prefix: "uploads/"), [], "0 kept prefixes or staged chunks")
        var revisions = Set<String>()
        for (fid, sha) in committed {
            let f = try u.send("GET", "/v1/files/\(fid)")
            revisions.insert(try XCTUnwrap(f.json["headRevisionId"] as? String))
            XCTAssertEqual(sha256Hex(try u.send("GET", "/v1/files/\(fid)/content").body), sha, "file \(fid) undamaged")
        }
        let stored = Set(try store.objectKeys(bucket: bucket, prefix: "content/"))
        XCTAssertEqual(stored, Set(revisions.map { "content/" + $0 }), "exactly the committed revisions are stored")
        print("s3 sweep: \(count) uploads (\(count - committed.count) killed), \(committed.count) committed; after the sweep: "
              + "\(try store.multipartUploads(bucket: bucket).count) multipart uploads, "
              + "\(try store.objectKeys(bucket: bucket, prefix: "uploads/").count) upload objects, "
              + "\(stored.subtracting(revisions.map { "content/" + $0 }).count) unreferenced and "
              + "\(Set(revisions.map { "content/" + $0 }).subtracting(stored).count) missing revision objects")
    }

    /// Writes a request head announcing `total` body bytes, sends `sent`, and drops the connection.
    private func cutOff(_ s: ServerProcess, _ u: APIUser, _ method: String, _ path: String, total: Int, sent: ArraySlice<UInt8>,
                        headers: [String: String] = [:]) throws {
        let c = s.client
        let fd = try c.connect()
        try c.writeAll(fd, c.requestHead(method, path, headers: headers.merging(["Authorization": "Bearer \(u.token)"]) { a, _ in a },
                                         bodyLength: total) + Array(sent))
        usleep(20_000)
        close(fd)
    }

    /// Ranges are served from the store: within the first 4 MiB piece, across a piece boundary,
    /// a suffix, and the whole file.
    func testRangeDownloadsComeFromTheStore() throws {
        let (s, _) = try s3Server()
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(9 << 20)
        let sid = try u.startSession(name: "r.bin", bytes: bytes).json["uploadId"] as! String
        XCTAssertEqual(try u.putAll(sid, bytes, chunkSize: 8 << 20).status, 201)
        let fid = try XCTUnwrap((try u.send("GET", "/v1/files").json["files"] as? [[String: Any]])?.first?["id"] as? String)
        for (header, range) in [("bytes=0-0", 0...0), ("bytes=4194000-4195000", 4_194_000...4_195_000),
                                ("bytes=-100", (bytes.count - 100)...(bytes.count - 1)),
                                ("bytes=8388600-", 8_388_600...(bytes.count - 1))] {
            let r = try u.send("GET", "/v1/files/\(fid)/content", headers: ["Range": header])
            XCTAssertEqual(r.status, 206, header)
            XCTAssertEqual(r.body, Array(bytes[range]), header)
        }
        XCTAssertEqual(try u.send("GET", "/v1/files/\(fid)/content").body, bytes)
    }

    /// A one-shot body of 1 MiB or more goes into the bucket while it arrives (`StreamedPut`):
    /// published as the revision's object; with a wrong `sha256` a 422 and no object; cut off
    /// midway, no object and no temp file left.
    func testAOneShotBodyIsStoredWhileItArrivesAndNothingIsLeftWhenItFails() throws {
        let (s, store) = try s3Server()
        let bucket = try XCTUnwrap(s.bucket)
        let u = try APIUser(s, "alice")
        let bytes = randomBytes(3 << 20 + 17)
        let f = try u.upload("big.bin", bytes)
        XCTAssertEqual(try u.send("GET", "/v1/files/\(f["id"] as! String)/content").body, bytes)
        XCTAssertEqual(try store.objectKeys(bucket: bucket, prefix: "content/"), ["content/" + (f["headRevisionId"] as! String)])

        let wrong = try u.send("POST", "/v1/upload?uploadType=media&name=wrong.bin&parentId=root&sha256=\(String(repeating: "0", count: 64))",
                               body: bytes)
        XCTAssertEqual(wrong.status, 422, wrong.text)
        XCTAssertEqual(try store.objectKeys(bucket: bucket, prefix: "content/"), ["content/" + (f["headRevisionId"] as! String)],
                       "the refused body left no object")

        let c = s.client
        let fd = try c.connect()
        try c.writeAll(fd, c.requestHead("POST", "/v1/upload?uploadType=media&name=cut.bin&parentId=root",
                                         headers: ["Authorization": "Bearer \(u.token)"], bodyLength: bytes.count) + Array(bytes[0..<(1 << 20)]))
        try waitUntil("the cut body to reach the server") { !s.tempFiles.isEmpty }
        close(fd)
        try waitUntil("the cut body's temp file to go") { s.tempFiles.isEmpty }
        // (A store may keep what a cut-off PUT sent, a moment after it answered: the server deletes
        // the key at once and again 3 s later.)
        let only = ["content/" + (f["headRevisionId"] as! String)]
        try? waitUntil("the cut body's object, if the store kept one, to go", timeout: 10) {
            try store.objectKeys(bucket: bucket, prefix: "content/") == only
        }
        XCTAssertEqual(try store.objectKeys(bucket: bucket, prefix: "content/"), only, "neither the refused nor the cut body left an object")
        XCTAssertEqual(try u.send("GET", "/v1/files?parentId=root").json["files"].map { ($0 as! [Any]).count }, 1)
    }

    /// `export` of a store whose content is in a bucket reads each revision's object into the
    /// bundle (an unfinished upload, a multipart upload in the bucket, is left out and said so);
    /// `import` of it into the data folder, and from there into another bucket, keeps every
    /// account, token and byte.
    func testExportAndImportMoveAStoreBetweenABucketAndTheFolder() throws {
        let (s, store) = try s3Server(["--max-chunk", "65536"])
        let u = try APIUser(s, "alice")
        let one = randomBytes(300_000), two = Array("two".utf8)
        let f1 = try u.upload("one.bin", one), f2 = try u.upload("two.txt", two)
        let open = randomBytes(100_000)
        let session = try XCTUnwrap(try u.startSession(name: "open.bin", bytes: open).json["uploadId"] as? String)
        XCTAssertEqual(try u.putChunk(session, open, 0, 65536).status, 308)
        s.stop()

        /// `vault-server export` of `from` into a new bundle, `import` of it into `to` (stopped,
        /// no users, its own signing key removed so the bundle's is the one), `to` started.
        func move(_ from: ServerProcess, _ to: ServerProcess) throws -> (export: String, import: String) {
            let bundle = NSTemporaryDirectory() + "vault-bundle-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: bundle) }
            let e = try ServerProcess.runCapturing(["export", "--data", from.dataDir + "/d", "--out", bundle] + from.metadataArgs)
            XCTAssertEqual(e.code, 0, e.stderr)
            XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: bundle + "/content")),
                           [f1["headRevisionId"] as! String, f2["headRevisionId"] as! String], "each revision's bytes")
            to.stop()
            try FileManager.default.removeItem(atPath: to.dataDir + "/d/jwt.secret")
            let i = try ServerProcess.runCapturing(["import", "--data", to.dataDir + "/d", "--from", bundle] + to.metadataArgs)
            XCTAssertEqual(i.code, 0, i.stderr)
            try to.start()
            return (e.stdout, i.stdout)
        }
        func assertCarried(_ t: ServerProcess, _ what: String) throws {
            let same = APIUser(t, token: u.token)   // the token from before the moves
            XCTAssertEqual(try same.send("GET", "/v1/files/\(f1["id"] as! String)/content").body, one, what)
            XCTAssertEqual(try same.send("GET", "/v1/files/\(f2["id"] as! String)/content").body, two, what)
            XCTAssertEqual(try same.send("GET", "/v1/upload/\(session)").status, 404, "\(what): the unfinished upload is not carried")
            XCTAssertEqual(try t.storedRevisionCount(), 2, what)
        }

        let folder = try ServerProcess(users: [], content: .some(nil))
        let toFolder = try move(s, folder)
        XCTAssertTrue(toFolder.export.contains("left 1 unfinished upload(s) in the object store"), toFolder.export)
        XCTAssertTrue(toFolder.import.contains("imported 2 users, 4 files, 2 revisions"), toFolder.import)
        try assertCarried(folder, "bucket → folder")

        let bucket = try ServerProcess(users: [], content: .some(try store.makeBucket()))
        let toBucket = try move(folder, bucket)
        XCTAssertTrue(toBucket.import.contains("imported 2 users, 4 files, 2 revisions"), toBucket.import)
        try assertCarried(bucket, "folder → bucket")
        XCTAssertEqual(Set(try store.objectKeys(bucket: try XCTUnwrap(bucket.bucket), prefix: "content/")),
                       ["content/" + (f1["headRevisionId"] as! String), "content/" + (f2["headRevisionId"] as! String)])
    }

    /// `migrate --content` creates the bucket (and again is fine); `user remove --content`
    /// deletes the user's objects.
    func testMigrateCreatesTheBucketAndUserRemoveDeletesObjects() throws {
        try XCTSkipUnless(SeaweedS3.available, SeaweedS3.unavailableMessage)
        let store = try SeaweedS3.shared()
        let url = store.contentURL(bucket: "vault-migrated-\(getpid())")
        let data = NSTemporaryDirectory() + "vault-migrate-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        for _ in 0..<2 {
            let r = try ServerProcess.runCapturing(["migrate", "--data", data, "--content", url])
            XCTAssertEqual(r.code, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("bucket ready"), r.stdout)
            XCTAssertFalse(r.stdout.contains(store.secretKey) || r.stderr.contains(store.secretKey), "the secret is never printed")
        }
        XCTAssertEqual(try store.objectKeys(bucket: "vault-migrated-\(getpid())"), [])

        let (s, _) = try s3Server()
        let u = try APIUser(s, "bob")
        _ = try u.upload("b.bin", Array("bob's".utf8))
        XCTAssertEqual(try s.storedRevisionCount(), 1)
        let r = try ServerProcess.runCapturing(["user", "remove", "bob", "--yes", "--data", s.dataDir + "/d"] + s.metadataArgs)
        XCTAssertEqual(r.code, 0, r.stderr)
        XCTAssertEqual(try s.storedRevisionCount(), 0)
    }

    /// A server whose credentials the store refuses, or whose bucket does not exist, does not
    /// start, and says what to fix (never the secret).
    func testWrongCredentialsOrAMissingBucketStopTheServerAtStart() throws {
        try XCTSkipUnless(SeaweedS3.available, SeaweedS3.unavailableMessage)
        let store = try SeaweedS3.shared()
        let data = NSTemporaryDirectory() + "vault-s3-refused-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        let wrong = data + ".credentials"
        defer { try? FileManager.default.removeItem(atPath: wrong) }
        try Data("[default]\naws_access_key_id = \(store.accessKey)\naws_secret_access_key = not-the-secret-at-all\n".utf8)
            .write(to: URL(fileURLWithPath: wrong))
        let bucket = try XCTUnwrap(URLComponents(string: try store.makeBucket())?.host)
        let refused = try ServerProcess.runCapturing(["serve", "--data", data, "--listen", "127.0.0.1:0",
                                                      "--content", "s3://\(bucket)?endpoint=\(store.endpoint)&credentials=\(wrong)"])
        XCTAssertEqual(refused.code, 1)
        XCTAssertTrue(refused.stderr.contains("check the credentials"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("not-the-secret-at-all"))
        let missing = try ServerProcess.runCapturing(["serve", "--data", data, "--listen", "127.0.0.1:0",
                                                      "--content", store.contentURL(bucket: "no-such-bucket-here")])
        XCTAssertEqual(missing.code, 1)
        XCTAssertTrue(missing.stderr.contains("vault-server migrate --content"), missing.stderr)
    }

    /// A file past 10,000 chunks gets a larger chunk size in its session; past 5 GiB the chunks
    /// are at least S3's 5 MiB part.
    func testSessionChunkSizeKeepsWithinTenThousandParts() throws {
        let c = try S3Content(location: S3Location(url: "s3://bucket-x?endpoint=http://127.0.0.1:1",
                                                   environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"]),
                              dataDir: "/nonexistent", instance: "test", clearTemps: false)
        let mib: Int64 = 1 << 20
        XCTAssertEqual(c.sessionChunkSize(size: 10_000 * 8 * mib, base: 8 * mib), 8 * mib)
        XCTAssertEqual(c.sessionChunkSize(size: 10_000 * 8 * mib + 1, base: 8 * mib), 16 * mib)
        XCTAssertEqual(c.sessionChunkSize(size: 1 << 40, base: 8 * mib), 112 * mib)   // 1 TiB / 10,000 ≈ 105 MiB, a multiple of 8 MiB
        XCTAssertEqual(c.sessionChunkSize(size: 4 << 30, base: 1000), 430_000)           // small chunks, composed by one PUT
        XCTAssertGreaterThanOrEqual(c.sessionChunkSize(size: 6 << 30, base: 1000), 5 * mib)
        for size in [Int64(1), 10_000 * 8 * mib + 1, 1 << 40, 1 << 50] {
            let chunk = c.sessionChunkSize(size: size, base: 8 * mib)
            XCTAssertLessThanOrEqual((size + chunk - 1) / chunk, 10_000)
            XCTAssertEqual(chunk % (8 * mib), 0, "a multiple of the server's chunk size")
        }
    }

    /// The `--content` URL: bucket, endpoint, region, credentials from the environment or a
    /// file; what to fix when something is missing; the secret never in the description.
    func testLocationParsingAndCredentials() throws {
        let env = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "very-secret"]
        let l = try S3Location(url: "s3://my-bucket?endpoint=http://127.0.0.1:9000/&region=eu-west-1", environment: env)
        XCTAssertEqual(l.bucket, "my-bucket"); XCTAssertEqual(l.endpoint, "http://127.0.0.1:9000"); XCTAssertEqual(l.region, "eu-west-1")
        XCTAssertFalse("\(l) \(l.credentials)".contains("very-secret"))
        XCTAssertEqual(try S3Location(url: "s3://my-bucket", environment: env).endpoint, "https://s3.us-east-1.amazonaws.com")
        XCTAssertThrowsError(try S3Location(url: "s3://my-bucket", environment: [:])) { e in
            XCTAssertTrue("\(e)".contains("AWS_ACCESS_KEY_ID"), "\(e)")
        }
        XCTAssertThrowsError(try S3Location(url: "s3://B!", environment: env))
        let file = NSTemporaryDirectory() + "creds-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data("[other]\naws_access_key_id = no\n[default]\naws_access_key_id = fromfile\naws_secret_access_key = s3cr3t\n".utf8)
            .write(to: URL(fileURLWithPath: file))
        let f = try S3Location(url: "s3://my-bucket?credentials=\(file)", environment: [:])
        XCTAssertEqual(f.credentials.accessKeyId, "fromfile"); XCTAssertEqual(f.credentials.secretAccessKey, "s3cr3t")
        XCTAssertEqual(S3Client(l).url("content/ab", [("uploadId", "x y"), ("partNumber", "3")]),
                       "http://127.0.0.1:9000/my-bucket/content/ab?partNumber=3&uploadId=x%20y", "query sorted and encoded for SigV4")
    }
}
