import XCTest

/// Tokens, bearer checks, `user add`.
final class AuthTests: XCTestCase {
    func testTokenSuccessAndFailures() throws {
        let s = try ServerProcess(args: ["--session-ttl", "60", "--test-faults"])
        let good = try s.client.send("POST", "/v1/auth/token", body: Array(#"{"username":"alice","password":"pw-alice"}"#.utf8))
        XCTAssertEqual(good.status, 200)
        XCTAssertNotNil(good.json["expiresAt"] as? String)
        let token = try XCTUnwrap(good.json["token"] as? String)
        XCTAssertEqual(token.split(separator: ".").count, 3)

        let wrong = try s.client.send("POST", "/v1/auth/token", body: Array(#"{"username":"alice","password":"nope"}"#.utf8))
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(wrong.errorCode, "unauthorized")
        let unknown = try s.client.send("POST", "/v1/auth/token", body: Array(#"{"username":"zed","password":"x"}"#.utf8))
        XCTAssertEqual(unknown.status, 401)
        let junk = try s.client.send("POST", "/v1/auth/token", body: Array("{not json".utf8))
        XCTAssertEqual(junk.status, 400)
        XCTAssertEqual(junk.errorCode, "invalid_json")

        XCTAssertEqual(try s.client.send("GET", "/v1/files").status, 401)
        XCTAssertEqual(try s.client.send("GET", "/v1/files", headers: ["Authorization": "Bearer abc.def.ghi"]).status, 401)
        var tampered = Array(token)
        tampered[tampered.count - 2] = tampered[tampered.count - 2] == "A" ? "B" : "A"
        XCTAssertEqual(try s.client.send("GET", "/v1/files", headers: ["Authorization": "Bearer \(String(tampered))"]).status, 401)
        let ok = try s.client.send("GET", "/v1/files", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(ok.status, 200)
        // The TTL passes on the server's test clock, not by waiting.
        XCTAssertEqual(try s.client.send("POST", "/v1/test/faults", body: Array(#"{"clockAheadSeconds":60}"#.utf8)).status, 200)
        let expired = try s.client.send("GET", "/v1/files", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(expired.status, 401)
        XCTAssertEqual(expired.header("WWW-Authenticate"), "Bearer")
    }

    func testLogNeverContainsSecretsAndDataIsPrivate() throws {
        let s = try ServerProcess()
        let u = try APIUser(s, "alice")
        _ = try u.send("GET", "/v1/files?parentId=root&pageToken=secretish")
        XCTAssertEqual(s.stop(), 0, "SIGTERM shuts down cleanly")
        let log = s.log
        XCTAssertTrue(log.contains("\"path\":\"/v1/files\""))
        XCTAssertFalse(log.contains(u.token))
        XCTAssertFalse(log.contains("pw-alice"))
        XCTAssertFalse(log.contains("secretish"))
        var st = stat()
        stat(s.dataDir + "/d", &st); XCTAssertEqual(st.st_mode & 0o777, 0o700)
        stat(s.dataDir + "/d/jwt.secret", &st); XCTAssertEqual(st.st_mode & 0o777, 0o600)
        stat(s.dataDir + "/d/meta.db", &st); XCTAssertEqual(st.st_mode & 0o077, 0)
    }

    func testUserAddRefusesDuplicatesAndUnknownRoutes() throws {
        let s = try ServerProcess()
        XCTAssertThrowsError(try s.addUser("alice"))
        let (code, out) = try ServerProcess.run(["user", "add", "carol", "--data", s.dataDir + "/d"] + s.metadataArgs, stdin: "pw-carol\n")
        XCTAssertEqual(code, 0)
        XCTAssertEqual(out.trimmingCharacters(in: .whitespacesAndNewlines).count, 32)
        XCTAssertNoThrow(try APIUser(s, "carol"))
        let r = try s.client.send("GET", "/v1/nothing")
        XCTAssertEqual(r.status, 404)
        XCTAssertEqual(r.errorCode, "route_not_found")
        let m = try s.client.send("PUT", "/v1/files")
        XCTAssertEqual(m.status, 405)
        XCTAssertEqual(try ServerProcess.run(["bogus", "--data", "/tmp/x"]).0, 2)
    }
}
