import XCTest
@testable import VaultServer
#if canImport(Glibc)
import Glibc
#endif

/// The socket-free parts of the connection limits, with time passed in by hand: the request-head
/// deadline, the event hub (cap, keep-alives, wake-ups, shutdown), worker lanes, and the options.
final class ConnectionUnitTests: XCTestCase {
    func testHeadDeadlineCutsOnlyConnectionsWaitingTooLongForAHead() {
        let cut = Locked([Int32]())
        let w = ConnectionWatch(headerTimeout: 10) { fd in cut.withLock { $0.append(fd) } }
        w.opened(1, fd: 11, now: 0)
        w.opened(2, fd: 12, now: 0)
        w.opened(3, fd: 13, now: 5)
        w.headReceived(2)                       // 2 is busy with a request
        XCTAssertEqual(w.expire(now: 9.9), 0)
        XCTAssertEqual(w.expire(now: 10), 1)
        XCTAssertEqual(cut.withLock { $0 }, [11])
        XCTAssertEqual(w.expire(now: 11), 0, "cut once")
        w.requestEnded(2, now: 12)              // kept alive: the next head is due from now
        XCTAssertEqual(w.expire(now: 15), 1)    // 3, opened at 5
        XCTAssertEqual(w.expire(now: 21.9), 0)
        XCTAssertEqual(w.expire(now: 22), 1)
        XCTAssertEqual(cut.withLock { $0 }, [11, 13, 12])
        w.closed(1); w.closed(2); w.closed(3)
        XCTAssertEqual(w.count, 0)
        w.requestEnded(1, now: 30)              // after close: ignored
        XCTAssertEqual(w.count, 0)
        XCTAssertEqual(ConnectionWatch(headerTimeout: 0) { _ in XCTFail("off") }.expire(now: 1e9), 0)
    }

    func testEventHubCapsStreamsPerUserAndReleasesOnClose() throws {
        let hub = EventHub(perUserLimit: 2, keepAlive: 15)
        let a = try hub.open(owner: "alice", after: 0, now: 0)
        let b = try hub.open(owner: "alice", after: 0, now: 0)
        XCTAssertThrowsError(try hub.open(owner: "alice", after: 0, now: 0)) {
            XCTAssertEqual(($0 as? APIError)?.status, 429)
            XCTAssertEqual(($0 as? APIError)?.headers.first?.0, "Retry-After")
        }
        XCTAssertNoThrow(try hub.open(owner: "bob", after: 0, now: 0))
        a.close(); a.close()
        XCTAssertEqual(hub.openStreams(owner: "alice"), 1)
        XCTAssertNoThrow(try hub.open(owner: "alice", after: 0, now: 0))
        b.close()
    }

    func testEventStreamSendsNewsKeepAlivesAndEnds() throws {
        let hub = EventHub(perUserLimit: 5, keepAlive: 15)
        hub.publish(owner: "alice", cursor: 7)
        let s = try hub.open(owner: "alice", after: 3, now: 100)
        let wakes = Locked(0)
        s.onWake { wakes.withLock { $0 += 1 } }
        XCTAssertEqual(drain(s), "retry: 2000\n: connected\n\n" + "id: 7\nevent: changed\ndata: {\"cursor\":7}\n\n",
                       "news since Last-Event-ID at once")
        XCTAssertEqual(poll(s), .later)

        hub.tick(now: 114.9)
        XCTAssertEqual(poll(s), .later, "no keep-alive before it is due")
        hub.tick(now: 115)
        XCTAssertEqual(wakes.withLock { $0 }, 1)
        XCTAssertEqual(drain(s), ": keep-alive\n\n")

        hub.publish(owner: "bob", cursor: 8)
        XCTAssertEqual(poll(s), .later, "another user's news")
        hub.publish(owner: "alice", cursor: 9)
        XCTAssertEqual(wakes.withLock { $0 }, 2)
        XCTAssertEqual(drain(s), "id: 9\nevent: changed\ndata: {\"cursor\":9}\n\n")

        hub.stop()
        XCTAssertEqual(poll(s), .end)
        let late = try hub.open(owner: "alice", after: 0, now: 200)
        XCTAssertTrue(drain(late).contains(": connected"))
        XCTAssertEqual(poll(late), .end, "a stream opened after shutdown ends at once")
    }

    func testEventStreamFailsWhenItsClientIsGone() throws {
        let hub = EventHub(perUserLimit: 5, keepAlive: 15)
        let s = try hub.open(owner: "alice", after: 0, now: 0)
        let woken = Locked(false)
        s.onWake { woken.withLock { $0 = true } }
        _ = drain(s)
        s.clientGone()
        XCTAssertTrue(woken.withLock { $0 })
        XCTAssertEqual(poll(s), .failed)
    }

    func testLaneRunsItsTasksInOrderAndLanesInParallel() {
        let pool = WorkerPool(threads: 4)
        defer { pool.stop() }
        let seen = Locked([Int]())
        let lane = pool.lane()
        let blocker = pool.lane()
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        blocker.run { release.wait() }          // a lane stuck in blocking work…
        for i in 0..<200 { lane.run { seen.withLock { $0.append(i) } } }
        lane.run { done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "…does not hold up another")
        XCTAssertEqual(seen.withLock { $0 }, Array(0..<200))
        release.signal()
    }

    func testAWakeUpBetweenNothingToDoAndSleepIsNotLost() {
        // Thread-per-connection parking (no libmicrohttpd connection is touched).
        let census = ParkingCensus()
        let parking = Parking(connection: OpaquePointer(bitPattern: 1)!, suspends: false, census: census)
        parking.arm()
        parking.signal()                                   // arrives before the reader sleeps
        XCTAssertFalse(parking.waitForSignal(), "returns at once: ask the stream again")
        parking.arm()
        let woke = DispatchSemaphore(value: 0)
        Thread { _ = parking.waitForSignal(); woke.signal() }.start()
        XCTAssertEqual(woke.wait(timeout: .now() + 0.2), .timedOut, "sleeps until signalled")
        parking.signal()
        XCTAssertEqual(woke.wait(timeout: .now() + 30), .success)
        XCTAssertTrue(census.closeAndDrain(timeout: 1))
        XCTAssertFalse(census.admit(), "no suspension once shutdown has begun")
    }

    func testHangupWatcherReportsAPeerThatClosed() throws {
        let watcher = try HangupWatcher()
        defer { watcher.stop() }
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[0]) }
        let gone = DispatchSemaphore(value: 0)
        let token = try XCTUnwrap(watcher.watch(fd: fds[0]) { gone.signal() })
        XCTAssertEqual(gone.wait(timeout: .now() + 0.2), .timedOut, "an open peer is not reported")
        close(fds[1])
        XCTAssertEqual(gone.wait(timeout: .now() + 30), .success, "a closed peer is, at once")
        watcher.unwatch(token, fd: fds[0])
    }

    func testLimitOptionsParseAndUnknownOptionsAreRefused() throws {
        guard case .serve(let c, _) = try ServerCommand.parse([
            "serve", "--data", "/d", "--max-connections-per-ip", "8", "--header-timeout", "5", "--idle-timeout", "30",
            "--max-event-streams", "4", "--threads", "0", "--workers", "3", "--connection-memory", "65536",
            "--tls-priorities", "SECURE256", "--login-user-failures", "2", "--login-ip-failures", "9",
            "--login-base-delay", "3", "--login-max-delay", "60", "--login-decay", "120",
        ]) else { return XCTFail("not serve") }
        XCTAssertEqual(c.maxConnectionsPerIP, 8); XCTAssertEqual(c.headerTimeout, 5); XCTAssertEqual(c.idleTimeout, 30)
        XCTAssertEqual(c.maxEventStreams, 4); XCTAssertEqual(c.threads, 0); XCTAssertEqual(c.workers, 3)
        XCTAssertEqual(c.connectionMemory, 65536); XCTAssertEqual(c.tlsPriorities, "SECURE256")
        XCTAssertEqual(c.loginThrottle.userFailures, 2); XCTAssertEqual(c.loginThrottle.ipFailures, 9)
        XCTAssertEqual(c.loginThrottle.baseDelay, 3); XCTAssertEqual(c.loginThrottle.maxDelay, 60)
        XCTAssertEqual(c.loginThrottle.decay, 120)
        guard case .serve(let d, _) = try ServerCommand.parse(["serve", "--data", "/d"]) else { return XCTFail() }
        XCTAssertEqual(d.tlsPriorities, ServerConfig.intermediateTLS)
        XCTAssertTrue(d.tlsPriorities.contains("-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"))
        for bad in [["--tls-priority", "NORMAL"], ["--connection-memory", "100"], ["--tls-priorities", ""], ["--threads", "-1"],
                    ["--instance", ".."], ["--instance", "."], ["--instance", "a/b"]] {
            XCTAssertThrowsError(try ServerCommand.parse(["serve", "--data", "/d"] + bad), "\(bad)")
        }
        XCTAssertTrue(ServerCommand.usage.contains("--max-connections-per-ip"))
        for help in [["--help"], ["-h"], ["serve", "--help"]] {
            guard case .help = try ServerCommand.parse(help) else { return XCTFail("\(help)") }
        }
    }

    // MARK: -

    private func poll(_ s: EventStream) -> LiveRead {
        var buf = [UInt8](repeating: 0, count: 4096)
        return buf.withUnsafeMutableBytes { s.poll(into: $0) }
    }

    /// Everything the stream has now, as text.
    private func drain(_ s: EventStream) -> String {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 7)   // small: pieces must join up
        while true {
            let r = buf.withUnsafeMutableBytes { s.poll(into: $0) }
            guard case .bytes(let n) = r else { break }
            out += buf[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
