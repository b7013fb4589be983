import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// One client cannot hold the server (issue 9, item 3): the per-IP connection cap, the
/// request-head deadline and the idle timeout, against the real process in both threading modes
/// (the default pool and `--threads 0`). Clients on 127.0.0.2… are other machines: all of
/// 127.0.0.0/8 is loopback.
final class ConnectionLimitTests: XCTestCase {
    static let modes: [[String]] = [[], ["--threads", "0"]]

    func testThousandTricklingConnectionsFromOneAddressDoNotLockOthersOut() throws {
        for mode in Self.modes {
            let s = try ServerProcess(args: mode + ["--quiet"])
            let c = s.client
            var fds: [Int32] = []
            defer { fds.forEach { close($0) } }
            for _ in 0..<1000 {
                guard let fd = try? c.connect(timeout: 5) else { continue }
                fds.append(fd)
                _ = send(fd, "GET /v1/files HTTP/1.1\r\nX-Slow: ", 31, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            let trickle = Trickler(fds, interval: 1)
            defer { trickle.stop() }
            // Another machine logs in and lists its files; each answer must come within the
            // client's 10 s receive timeout.
            let login = try s.login("alice", "pw-alice", from: "127.0.0.2")
            XCTAssertEqual(login.status, 200, "\(mode): \(login.text)")
            let token = try XCTUnwrap(login.json["token"] as? String)
            let list = try c.send("GET", "/v1/files", headers: ["Authorization": "Bearer \(token)"], timeout: 10, from: "127.0.0.2")
            XCTAssertEqual(list.status, 200, "\(mode)")
            // Each refused connection is a libmicrohttpd message: at most 20 a second reach the log.
            let messages = s.log.split(separator: "\n").filter { $0.hasPrefix("libmicrohttpd:") }
            XCTAssertLessThan(messages.count, 300, "\(mode): \(messages.prefix(3))")
        }
    }

    func testPerAddressLimitRefusesOnlyTheBusyAddress() throws {
        for mode in Self.modes {
            let s = try ServerProcess(args: mode + ["--max-connections-per-ip", "4"])
            let c = s.client
            // Signed in from another address: the login's own connection, which the server may
            // not have released yet, must not count against 127.0.0.1's four.
            let login = try s.login("alice", "pw-alice", from: "127.0.0.3")
            let auth = ["Authorization": "Bearer \(try XCTUnwrap(login.json["token"] as? String))"]
            // Four kept-alive connections from 127.0.0.1, each answered once, so the server
            // surely holds them.
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            for _ in 0..<4 {
                let fd = try c.connect(timeout: 10)
                held.append(fd)
                XCTAssertEqual(try c.keptAlive(fd, "GET", "/v1/files", headers: auth).status, 200)
            }
            XCTAssertTrue(try c.refusedWithoutAnswer(), "\(mode): a fifth connection from the same address is closed unanswered")
            XCTAssertEqual(try c.send("GET", "/v1/files", headers: auth, timeout: 10, from: "127.0.0.2").status, 200,
                           "\(mode): another address is served")
            close(held.removeLast())
            XCTAssertTrue(eventually(within: 10) { (try? c.send("GET", "/v1/files", headers: auth, timeout: 10))?.status == 200 },
                          "\(mode): a closed connection frees its place")
        }
    }

    func testHeadDeadlineAndIdleTimeoutCloseConnections() throws {
        for mode in Self.modes {
            let s = try ServerProcess(args: mode + ["--header-timeout", "2", "--idle-timeout", "3"])
            let c = s.client
            let silent = try c.connect(timeout: 10)
            // A head that never ends, though a byte comes every 0.3 s (never idle).
            let trickling = try c.connect(timeout: 10)
            try c.writeAll(trickling, Array("GET /v1/files HTTP/1.1\r\nX-Slow: ".utf8))
            let trickle = Trickler([trickling], interval: 0.3)
            defer { trickle.stop() }
            // Kept alive after an answer, then silent.
            let kept = try c.connect(timeout: 10)
            XCTAssertEqual(try c.keptAlive(kept, "GET", "/v1/nothing").status, 404)
            // A complete head, then a body that stalls: the idle timeout.
            let stalled = try c.connect(timeout: 10)
            try c.writeAll(stalled, c.requestHead("POST", "/v1/auth/token", headers: [:], bodyLength: 100) + Array("{".utf8))
            defer { [silent, trickling, kept, stalled].forEach { close($0) } }
            for (name, fd) in [("silent", silent), ("trickling", trickling), ("kept-alive", kept), ("stalled body", stalled)] {
                XCTAssertTrue(HTTPTestClient.closedByServer(fd, within: 20), "\(mode): the \(name) connection was not closed")
            }
            XCTAssertEqual(try c.send("GET", "/v1/nothing").status, 404, "\(mode): still serving")
        }
    }
}
