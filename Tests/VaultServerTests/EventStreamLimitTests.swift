import VaultTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Event streams (issue 9, item 3): a per-user cap answered 429, and a stream whose client
/// closed is released at once, not at its next keep-alive, in both threading modes.
final class EventStreamLimitTests: XCTestCase {
    func testPerUserCapAndClosedStreamsAreReleasedAtOnce() throws {
        for mode in ConnectionLimitTests.modes {
            // A keep-alive of 600 s: nothing but the hang-up watcher can notice a closed stream in time.
            let s = try ServerProcess(args: mode + ["--max-event-streams", "3", "--keepalive", "600"])
            let alice = try APIUser(s, "alice")
            let c = s.client
            var open: [Int32] = []
            defer { open.forEach { close($0) } }
            for _ in 0..<3 { open.append(try XCTUnwrap(c.openStream(token: alice.token).fd)) }

            let fourth = try alice.send("GET", "/v1/events")
            XCTAssertEqual(fourth.status, 429, "\(mode): \(fourth.text)")
            XCTAssertEqual(fourth.errorCode, "too_many_requests")
            XCTAssertNotNil(fourth.header("Retry-After").flatMap(Int.init))
            let bob = try c.openStream(token: try s.token("bob"))
            XCTAssertNotNil(bob.fd, "\(mode): another user is not affected")
            bob.fd.map { _ = close($0) }

            close(open.removeFirst())
            var again: Int32?
            XCTAssertTrue(eventually(within: 10) {
                again = (try? c.openStream(token: alice.token))?.fd
                return again != nil
            }, "\(mode): the closed stream still holds its place")
            if let again { open.append(again) }

            // The streams left still carry news.
            _ = try alice.mkdir("news")
            var text = ""
            XCTAssertTrue(c.read(open[0], until: "event: changed", into: &text, timeout: 10), "\(mode): \(text)")
            XCTAssertEqual(s.stop(), 0, "\(mode): shutdown ends the streams")
        }
    }

    /// A stream waits for news, not for its client: the idle timeout (which closes silent
    /// clients) must not close it, in either mode.
    func testAnIdleStreamOutlivesTheIdleTimeout() throws {
        for mode in ConnectionLimitTests.modes {
            let s = try ServerProcess(args: mode + ["--idle-timeout", "1", "--header-timeout", "1", "--keepalive", "600"])
            let alice = try APIUser(s, "alice")
            let fd = try XCTUnwrap(s.client.openStream(token: alice.token).fd)
            defer { close(fd) }
            XCTAssertFalse(HTTPTestClient.closedByServer(fd, within: 3), "\(mode): closed while waiting for news")
            _ = try alice.mkdir("late")
            var text = ""
            XCTAssertTrue(s.client.read(fd, until: "event: changed", into: &text, timeout: 10), "\(mode): \(text)")
        }
    }
}
