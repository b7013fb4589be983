import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import VaultAPI
@testable import VaultServer

/// `vault-server user list | passwd | remove | sessions revoke`, through the binary, against the
/// data folder of a server that keeps running: a removed user's or a revoked token is refused at
/// once, and a removed user's data is gone from the database and the disk, nobody else's.
final class UserManagementTests: XCTestCase {
    private func user(_ s: ServerProcess, _ args: [String], stdin: String? = "") throws -> (code: Int32, stdout: String, stderr: String) {
        try ServerProcess.runCapturing(["user"] + args + ["--data", s.dataDir + "/d"] + s.metadataArgs, stdin: stdin)
    }

    private func files(_ s: ServerProcess, _ sub: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: s.dataDir + "/d/" + sub)) ?? [])
    }

    private func status(_ s: ServerProcess, token: String, _ path: String = "/v1/files") throws -> Int {
        try s.client.send("GET", path, headers: ["Authorization": "Bearer \(token)"]).status
    }

    func testRemoveAsksThenDeletesEverythingOfTheUserAndItsTokenStopsAtOnce() throws {
        let s = try ServerProcess(args: ["--max-chunk", "1000"])
        try XCTSkipIf(s.bucket != nil, "counts the data folder's files (on S3: S3ContentTests.testMigrateCreatesTheBucketAndUserRemoveDeletesObjects)")
        let bob = try APIUser(s, "bob")
        let bobFile = try bob.upload("b.bin", Array("bob's bytes".utf8))
        let bobContent = files(s, "content")
        let alice = try APIUser(s, "alice")
        let a = try alice.upload("a.bin", randomBytes(300))
        let aId = try XCTUnwrap(a["id"] as? String)
        XCTAssertEqual(try alice.send("POST", "/v1/upload?uploadType=media&fileId=\(aId)",
                                      headers: ["If-Match": "\"1\""], body: randomBytes(200)).status, 201, "a second revision")
        let folder = try alice.mkdir("docs")
        XCTAssertEqual(try alice.send("DELETE", "/v1/files/\(folder["id"] as! String)", headers: ["If-Match": "\"1\""]).status, 200, "trashed")
        XCTAssertEqual(try alice.json("PUT", "/v1/keys/envelope", ["envelope": "sealed"], headers: ["If-None-Match": "*"]).status, 201)
        let big = randomBytes(2500)
        let session = try XCTUnwrap(alice.startSession(name: "big.bin", bytes: big).json["uploadId"] as? String)
        XCTAssertEqual(try alice.putChunk(session, big, 0, 1000).status, 308)
        XCTAssertTrue(files(s, "uploads").contains(session + ".part"), "a partial upload on disk")
        XCTAssertEqual(files(s, "content").subtracting(bobContent).count, 2, "alice's two revisions on disk")

        // Without a terminal and without --yes: refused, nothing deleted.
        let refused = try user(s, ["remove", "alice"])
        XCTAssertEqual(refused.code, 1)
        XCTAssertTrue(refused.stderr.contains("--yes"), refused.stderr)
        XCTAssertEqual(try status(s, token: alice.token), 200)
        XCTAssertEqual(files(s, "content").subtracting(bobContent).count, 2)

        let removed = try user(s, ["remove", "alice", "--yes"])
        XCTAssertEqual(removed.code, 0, removed.stderr)
        XCTAssertTrue(removed.stdout.contains("removed user alice"), removed.stdout)
        // The running server refuses the old token at once, on every kind of route.
        XCTAssertEqual(try status(s, token: alice.token), 401)
        XCTAssertEqual(try status(s, token: alice.token, "/v1/files/\(aId)/content"), 401)
        XCTAssertEqual(try status(s, token: alice.token, "/v1/changes?cursor=0"), 401)
        XCTAssertEqual(try alice.putChunk(session, big, 1000, 2000).status, 401)
        XCTAssertThrowsError(try s.token("alice"), "the password is gone too")
        // Content and partial data gone from the data folder; bob's untouched.
        XCTAssertEqual(files(s, "content"), bobContent)
        XCTAssertFalse(files(s, "uploads").contains(session + ".part"))
        let bobGet = try bob.send("GET", "/v1/files/\(bobFile["id"] as! String)/content")
        XCTAssertEqual(bobGet.status, 200)
        XCTAssertEqual(bobGet.body, Array("bob's bytes".utf8))
        // A new alice starts empty: no files, no trash, no envelope.
        try s.addUser("alice")
        let again = try APIUser(s, "alice")
        XCTAssertEqual((try again.send("GET", "/v1/files?parentId=root").json["files"] as? [Any])?.count, 0)
        let everything = try XCTUnwrap(try again.send("GET", "/v1/files?scope=all").json["files"] as? [[String: Any]])
        XCTAssertTrue(everything.allSatisfy { !["a.bin", "docs", "big.bin"].contains($0["name"] as? String) }, "nor in the trash")
        XCTAssertEqual(try again.send("GET", "/v1/keys/envelope").errorCode, "no_envelope")
        XCTAssertEqual(try user(s, ["remove", "nobody", "--yes"]).code, 1, "an unknown user")
        // The server restarts cleanly on what is left.
        XCTAssertEqual(s.stop(), 0)
        try s.start()
        XCTAssertEqual(try bob.send("GET", "/v1/files/\(bobFile["id"] as! String)/content").status, 200)
    }

    func testRevokedAndReplacedPasswordTokensAreRefusedAtOnceAndANewLoginWorks() throws {
        let s = try ServerProcess()
        let bob = try APIUser(s, "bob")
        let first = try s.token("alice")
        XCTAssertEqual(try status(s, token: first), 200)

        let revoked = try user(s, ["sessions", "revoke", "alice"])
        XCTAssertEqual(revoked.code, 0, revoked.stderr)
        XCTAssertEqual(try status(s, token: first), 401, "revoked at once in the running server")
        let second = try s.token("alice")
        XCTAssertEqual(try status(s, token: second), 200, "a new login works")
        XCTAssertEqual(try status(s, token: bob.token), 200, "another user's token is untouched")

        let changed = try user(s, ["passwd", "alice"], stdin: "new-secret\n")
        XCTAssertEqual(changed.code, 0, changed.stderr)
        XCTAssertFalse(changed.stdout.contains("new-secret") || changed.stderr.contains("new-secret"))
        XCTAssertEqual(try status(s, token: second), 401, "a new password ends the earlier tokens")
        XCTAssertThrowsError(try s.token("alice"), "the old password is refused")
        XCTAssertEqual(try status(s, token: try s.token("alice", password: "new-secret")), 200)
        XCTAssertEqual(try status(s, token: bob.token), 200)

        for args in [["sessions", "revoke", "nobody"], ["passwd", "nobody"]] {
            let r = try user(s, args, stdin: "x\n")
            XCTAssertEqual(r.code, 1, "\(args)")
            XCTAssertTrue(r.stderr.contains("no user nobody"), r.stderr)
        }
    }

    func testEventStreamsOfARevokedOrRemovedUserAreCutOffByTheNextSweep() throws {
        let s = try ServerProcess(args: ["--sweep-interval", "1", "--keepalive", "600"])
        let old = try XCTUnwrap(s.client.openStream(token: try s.token("alice")).fd)
        let bob = try XCTUnwrap(s.client.openStream(token: try s.token("bob")).fd)
        defer { close(old); close(bob) }
        XCTAssertEqual(try user(s, ["sessions", "revoke", "alice"]).code, 0)
        XCTAssertTrue(HTTPTestClient.closedByServer(old, within: 20), "the revoked token's stream is cut off")
        let fresh = try XCTUnwrap(s.client.openStream(token: try s.token("alice")).fd)
        defer { close(fresh) }
        XCTAssertEqual(try user(s, ["remove", "alice", "--yes"]).code, 0)
        XCTAssertTrue(HTTPTestClient.closedByServer(fresh, within: 20), "a removed user's stream is cut off")
        XCTAssertFalse(HTTPTestClient.closedByServer(bob, within: 2), "another user's stream stays")
    }

    func testListShowsEveryUserAsLinesOrJSON() throws {
        let s = try ServerProcess(users: ["carol", "alice", "bob"])
        let lines = try user(s, ["list"])
        XCTAssertEqual(lines.code, 0, lines.stderr)
        let rows = lines.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        XCTAssertEqual(rows.map { $0[0] }, ["alice", "bob", "carol"])
        XCTAssertTrue(rows.allSatisfy { $0.count == 3 && $0[1].count == 32 }, lines.stdout)
        let json = try user(s, ["list", "--json"])
        let array = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]])
        XCTAssertEqual(array.map { $0["name"] }, ["alice", "bob", "carol"])
        XCTAssertEqual(array.map { $0["id"] }, rows.map { $0[1] })
        XCTAssertEqual(Set(array[0].keys), ["name", "id", "createdAt"])

        let missing = s.dataDir + "/typo"
        for args in [["list"], ["remove", "alice", "--yes"], ["sessions", "revoke", "alice"]] {
            let r = try ServerProcess.runCapturing(["user"] + args + ["--data", missing], stdin: "")
            XCTAssertEqual(r.code, 1, "\(args)")
            XCTAssertTrue(r.stderr.contains("check --data"), r.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing), "a mistyped --data creates nothing")
    }

    /// A request of a user removed while it was past its token check cannot leave rows behind.
    func testNoRowCanBeAddedForARemovedUser() throws {
        let dir = NSTemporaryDirectory() + "vault-users-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try MetadataStore(MetadataLocation(argument: try ServerProcess.defaultMetadata(), dataDir: dir))
        let users = UserDirectory(store: store)
        let id = try users.add(name: "alice", password: Array("pw".utf8))
        _ = try users.remove(name: "alice")
        let now = Date()
        let file = FileResource(id: "f", name: "n", parentId: "root", type: .file, mimeType: "application/octet-stream",
                                size: 0, version: 1, sha256: nil, createdAt: now, modifiedAt: now, trashed: false, headRevisionId: nil)
        XCTAssertThrowsError(try store.write(.owner(id)) { db in try db.insertFile(owner: id, file) }) { error in
            XCTAssertEqual(APIError.unexpected(error).status, 401)
        }
        XCTAssertThrowsError(try store.write(.owner(id)) { db in try db.saveEnvelope(owner: id, KeyEnvelope(envelope: "e", version: 1)) })
    }
}
