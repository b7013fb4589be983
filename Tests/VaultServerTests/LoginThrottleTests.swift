import XCTest
import VaultTestSupport
@testable import VaultServer

/// Failed logins back off per user name and per client address (issue 9, item 3): against the
/// real process with clients on several loopback addresses, and the policy itself with a clock
/// the test moves.
final class LoginThrottleTests: XCTestCase {
    func testFailedLoginsAreHeldBackPerUserAndPerAddress() throws {
        // Backoff after 3 failures per name and 6 per address; a first wait of 60 s, so nothing
        // here depends on how fast the test runs.
        let s = try ServerProcess(args: ["--login-user-failures", "3", "--login-ip-failures", "6", "--login-base-delay", "60"])
        try s.addUser("carol")
        XCTAssertEqual(try s.login("alice", "pw-alice", from: "127.0.0.2").status, 200, "alice's usual address")

        // Guessing at alice from 127.0.0.3: three wrong answers, then 429 without a check.
        for _ in 0..<3 { XCTAssertEqual(try s.login("alice", "guess", from: "127.0.0.3").status, 401) }
        let held = try s.login("alice", "guess", from: "127.0.0.3")
        XCTAssertEqual(held.status, 429, held.text)
        XCTAssertEqual(held.errorCode, "too_many_requests")
        XCTAssertGreaterThanOrEqual(held.header("Retry-After").flatMap(Int.init) ?? 0, 1)
        XCTAssertEqual(try s.login("alice", "pw-alice", from: "127.0.0.3").status, 429, "not even the right password is checked")
        XCTAssertEqual(try s.login("alice", "pw-alice", from: "127.0.0.4").status, 429, "a new address waits too")
        XCTAssertEqual(try s.login("alice", "pw-alice", from: "127.0.0.2").status, 200, "alice's known address still gets in")
        XCTAssertEqual(try s.login("bob", "pw-bob", from: "127.0.0.4").status, 200, "other users are not affected")

        // Unknown names are counted like real ones (no hint of who exists).
        for _ in 0..<3 { XCTAssertEqual(try s.login("nobody", "x", from: "127.0.0.7").status, 401) }
        XCTAssertEqual(try s.login("nobody", "x", from: "127.0.0.7").status, 429)

        // One address spraying many names is held back as an address.
        for i in 0..<6 { XCTAssertEqual(try s.login("user\(i)", "x", from: "127.0.0.5").status, 401) }
        XCTAssertEqual(try s.login("user6", "x", from: "127.0.0.5").status, 429)
        XCTAssertEqual(try s.login("carol", "pw-carol", from: "127.0.0.5").status, 429)
        XCTAssertEqual(try s.login("carol", "pw-carol", from: "127.0.0.6").status, 200)
    }

    /// The counts live in the metadata store: a restart forgets nothing.
    func testBackoffSurvivesARestart() throws {
        let s = try ServerProcess(args: ["--login-user-failures", "2", "--login-base-delay", "60"])
        for _ in 0..<2 { XCTAssertEqual(try s.login("alice", "guess", from: "127.0.0.3").status, 401) }
        XCTAssertEqual(s.stop(), 0)
        try s.start()
        XCTAssertEqual(try s.login("alice", "guess", from: "127.0.0.3").status, 429)
    }

    /// The store's ledger gives the same answers as the memory one over a seeded run of
    /// attempts, and the sweep deletes what is forgotten.
    func testStoredLedgerAgreesWithTheMemoryOneAndIsSwept() throws {
        let dir = NSTemporaryDirectory() + "vault-throttle-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try MetadataStore(path: dir + "/meta.db")
        var p = LoginThrottlePolicy()
        p.userFailures = 3; p.ipFailures = 4; p.baseDelay = 2; p.maxDelay = 30; p.decay = 100; p.knownIPsPerUser = 2
        let clock = Clock()
        let memory = LoginThrottle(policy: p, ledger: MemoryLoginLedger(policy: p), clock: { clock.now })
        let stored = LoginThrottle(policy: p, ledger: StoredLoginLedger(store: store), clock: { clock.now })
        var rng = SeededGenerator(test: name)
        for step in 0..<400 {
            clock.now += Double(rng.next() % 20)
            let user = "u\(rng.next() % 3)", ip = "ip\(rng.next() % 4)"
            let a = try memory.admit(user: user, ip: ip), b = try stored.admit(user: user, ip: ip)
            XCTAssertEqual(a, b, "step \(step)")
            if a == nil && rng.next() % 3 == 0 {
                try memory.succeeded(user: user, ip: ip); try stored.succeeded(user: user, ip: ip)
            }
            XCTAssertTrue(try memory.failures(user: user, ip: ip) == stored.failures(user: user, ip: ip), "step \(step)")
        }
        clock.now += 1e7
        let swept = try store.write(.logins) { db in try db.pruneLogins(now: clock.now, decay: p.decay, knownFor: p.knownFor) }
        XCTAssertGreaterThan(swept, 0)
        XCTAssertEqual(try store.write(.logins) { db in try db.pruneLogins(now: clock.now, decay: p.decay, knownFor: p.knownFor) }, 0, "nothing left")
    }

    // MARK: - The policy, with a hand-moved clock

    private final class Clock: @unchecked Sendable {
        var now: Double = 1000
    }

    private func throttle(_ configure: (inout LoginThrottlePolicy) -> Void = { _ in }) -> (LoginThrottle, Clock) {
        var p = LoginThrottlePolicy()
        p.userFailures = 3; p.ipFailures = 5; p.baseDelay = 2; p.maxDelay = 30; p.decay = 100
        configure(&p)
        let clock = Clock()
        return (LoginThrottle(policy: p, ledger: MemoryLoginLedger(policy: p), clock: { clock.now }), clock)
    }

    func testBackoffDoublesUpToTheCapAndDecays() throws {
        let (t, clock) = throttle()
        for _ in 0..<3 { XCTAssertNil(try t.admit(user: "a", ip: "1")) }   // three failures are free
        XCTAssertEqual(try t.admit(user: "a", ip: "1"), 2, "then 2 s after the last failure")
        clock.now += 2
        XCTAssertNil(try t.admit(user: "a", ip: "1"))                       // fourth failure
        XCTAssertEqual(try t.admit(user: "a", ip: "1"), 4)
        clock.now += 4
        XCTAssertNil(try t.admit(user: "a", ip: "1"))                       // fifth: the IP's limit too
        XCTAssertEqual(try t.admit(user: "a", ip: "1"), 8)
        for _ in 0..<4 { clock.now += 30; XCTAssertNil(try t.admit(user: "a", ip: "1")) }
        XCTAssertEqual(try t.admit(user: "a", ip: "1"), 30, "capped at maxDelay")
        XCTAssertEqual(try t.failures(user: "a", ip: "1").user, 9)
        clock.now += 100 * 6
        XCTAssertEqual(try t.failures(user: "a", ip: "1").user, 3, "one failure forgotten per 100 s")
        clock.now += 100 * 3
        XCTAssertEqual(try t.failures(user: "a", ip: "1").user, 0)
        XCTAssertNil(try t.admit(user: "a", ip: "1"))
    }

    func testSuccessTakesBackItsMarkAndItsAddressSkipsTheUsersBackoff() throws {
        let (t, clock) = throttle()
        XCTAssertNil(try t.admit(user: "a", ip: "home"))
        try t.succeeded(user: "a", ip: "home")
        XCTAssertEqual(try t.failures(user: "a", ip: "home").user, 0, "a right password is not a failure")
        for _ in 0..<3 { XCTAssertNil(try t.admit(user: "a", ip: "evil")) }
        XCTAssertNotNil(try t.admit(user: "a", ip: "evil"))
        XCTAssertNotNil(try t.admit(user: "a", ip: "cafe"), "an address never seen waits")
        XCTAssertNil(try t.admit(user: "a", ip: "home"), "the known address does not")
        try t.succeeded(user: "a", ip: "home")
        XCTAssertEqual(try t.failures(user: "a", ip: "evil").user, 3, "a success clears nobody else's failures")

        clock.now += 31 * 86_400   // past knownFor (30 days); the old failures are forgotten too
        for _ in 0..<3 { XCTAssertNil(try t.admit(user: "a", ip: "evil")) }
        XCTAssertNotNil(try t.admit(user: "a", ip: "home"), "an address is known for 30 days only")
    }

    func testTablesStayBounded() throws {
        let (t, clock) = throttle { $0.maxEntries = 100; $0.decay = 1e9 }
        for i in 0..<1000 {
            clock.now += 1
            _ = try t.admit(user: "u\(i)", ip: "ip\(i)")
            try t.succeeded(user: "v\(i)", ip: "ip\(i)")
        }
        XCTAssertEqual(try t.failures(user: "u999", ip: "ip999").user, 1, "the newest is kept")
        XCTAssertEqual(try t.failures(user: "u0", ip: "ip0").user, 0, "the stalest went")
        let sizes = (t.ledger as! MemoryLoginLedger).tableSizes
        XCTAssertLessThanOrEqual(sizes.users, 100)
        XCTAssertLessThanOrEqual(sizes.ips, 100)
        XCTAssertLessThanOrEqual(sizes.known, 100)
    }
}
