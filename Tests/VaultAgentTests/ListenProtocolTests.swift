import XCTest
import VaultCore
@testable import VaultAgent

/// The line protocol and exit codes of `vault agent listen`, which the agent's `ChangeFeed` reads.
final class ListenProtocolTests: XCTestCase {
    func testLinesRoundTripAsTheListenerPrintsThem() {
        XCTAssertEqual(ListenLine.open.text, "open")
        XCTAssertEqual(ListenLine.event(id: "42").text, "event 42")
        XCTAssertEqual(ListenLine.event(id: nil).text, "event -")
        for line in [ListenLine.open, .event(id: "42"), .event(id: nil), .event(id: "a b")] {
            XCTAssertEqual(ListenLine(text: line.text), line, line.text)
        }
        XCTAssertNil(ListenLine(text: "retry 5"), "a line this version does not know is ignored")
        XCTAssertNil(ListenLine(text: ""))
    }

    func testExitCodesAgreeWithTheVaultErrorsTheListenerExitsWith() {
        XCTAssertEqual(ListenExit.locked, VaultError(.locked, "").exitCode)
        XCTAssertEqual(ListenExit.notLoggedIn, VaultError(.notFound, "").exitCode)
        XCTAssertEqual(Set([ListenExit.ended, ListenExit.failed, ListenExit.locked, ListenExit.notLoggedIn,
                            ListenExit.tokenRefused]).count, 5, "each says something else")
    }
}
