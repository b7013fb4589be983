import Foundation
import XCTest

/// What `vault unlock` promises about its timeouts: it names the ones the session really got (a
/// policy may cap what was asked), and an idle timeout is honoured to the second, however short.
/// The clock is set through `VAULT_TEST_NOW` (test hooks), never waited for.
final class SessionLimitTests: XCTestCase {
    var h: CLIHarness!

    override func setUpWithError() throws {
        try XCTSkipUnless(CLIHarness.keyringAvailable, "needs a D-Bus session with a Secret Service (run scripts/test.sh)")
        h = try CLIHarness()
        try h.initVault()
    }

    override func tearDown() { _ = try? h?.run(["lock"]); h = nil }

    func testUnlockSaysTheTimeoutsThePolicyImposes() throws {
        try h.usePolicy(#"{"idleTimeoutMax": 300, "absoluteTimeoutMax": 3600}"#)
        let r = try h.ok(["unlock", "--idle", "15m", "--absolute", "8h"] + h.pw)
        XCTAssertTrue(r.out.contains("locks after 5 min (the policy's maximum; 15 min was asked) idle time, 1 h (the policy's maximum; 8 h was asked) absolute limit"), r.out)
        let j = try XCTUnwrap(try h.ok(["unlock", "--idle", "2m", "--absolute", "0", "--json"] + h.pw).json as? [String: Any])
        XCTAssertEqual(j["idleTimeout"] as? Int, 120, "what was asked, within the maximum")
        XCTAssertEqual(j["absoluteTimeout"] as? Int, 3600, "never is capped")
        let status = try XCTUnwrap(try h.ok(["status", "--json"]).json as? [String: Any])
        let unlockedAt = try XCTUnwrap(status["unlockedAt"] as? Int), locksAt = try XCTUnwrap(status["locksAt"] as? Int)
        XCTAssertLessThanOrEqual(locksAt - unlockedAt, 120, "status agrees with what unlock said")
    }

    func testShortIdleTimeoutIsHonouredToTheSecond() throws {
        let t0 = Int(Date().timeIntervalSince1970)
        func at(_ s: Int) -> [String: String] { ["VAULT_TEST_HOOKS": "1", "VAULT_TEST_NOW": String(t0 + s)] }
        try h.ok(["unlock", "--idle", "20s", "--absolute", "0"] + h.pw, env: at(0))
        // Used every 15 s, an idle timeout of 20 s never expires...
        for s in [15, 30, 45, 60] {
            let r = try h.run(["ls"], env: at(s))
            XCTAssertEqual(r.status, 0, "used at +\(s) s, 15 s after the last use: \(r.stderr)")
        }
        // ...and 20 s after the last use it does, to the second.
        XCTAssertEqual(try h.run(["ls"], env: at(79)).status, 0, "19 s after the last use")
        let r = try h.run(["ls"], env: at(99))
        XCTAssertEqual(r.status, 3, "20 s after the last use (at +79)")
        XCTAssertTrue(r.stderr.contains("idle timeout"), r.stderr)
    }
}
