import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Crash points for the crash-safety tests: with `VAULT_TEST_HOOKS=1` and
/// `VAULT_TEST_CRASH_AT=<name>`, the process kills itself with SIGKILL at that point, exactly as
/// `kill -9` would; with `VAULT_TEST_TRAP_AT=<name>` it stops on a Swift runtime trap there, as
/// a bug would. Without these variables this does nothing.
public enum TestHooks {
    static let crashAt: String? = hook("VAULT_TEST_CRASH_AT")
    /// `VAULT_TEST_TOUCH_INTERVAL=<seconds>`: how often a session's idle clock is refreshed (30 s
    /// otherwise), so a test can tell use from a refresh in seconds rather than minutes.
    static let touchInterval: Int64? = hook("VAULT_TEST_TOUCH_INTERVAL").flatMap { Int64($0) }
    static let trapAt: String? = hook("VAULT_TEST_TRAP_AT")

    private static func hook(_ name: String) -> String? {
        let env = ProcessInfo.processInfo.environment
        guard env["VAULT_TEST_HOOKS"] == "1" else { return nil }
        return env[name]
    }

    public static func crashPoint(_ name: String) {
        if let at = crashAt, at == name { kill(getpid(), SIGKILL) }
    }

    /// A Swift runtime trap (the signal a failed precondition raises) at `name`, for the tests
    /// that check a crash leaves the terminal usable.
    public static func trapPoint(_ name: String) {
        if let at = trapAt, at == name { fatalError("test trap at \(name)") }
    }
}
