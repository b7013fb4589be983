import Foundation
internal import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Crash points for the crash-safety tests: with `VAULT_TEST_HOOKS=1` and
/// `VAULT_TEST_CRASH_AT=<name>` (or `<name>#<n>`: the n-th time the point is reached), the
/// process kills itself with SIGKILL at that point, exactly as `kill -9` would; with
/// `VAULT_TEST_TRAP_AT=<name>` it stops on a Swift runtime trap there, as a bug would. Without
/// these variables this does nothing.
public enum TestHooks {
    static let crashAt: (name: String, hit: Int)? = hook("VAULT_TEST_CRASH_AT").map { spec in
        let parts = spec.split(separator: "#", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }
    static let trapAt: String? = hook("VAULT_TEST_TRAP_AT")
    /// Hits of the armed crash point so far.
    static let hits = Mutex(0)

    private static func hook(_ name: String) -> String? {
        let env = ProcessInfo.processInfo.environment
        guard env["VAULT_TEST_HOOKS"] == "1" else { return nil }
        return env[name]
    }

    /// With `VAULT_TEST_HOOKS=1` and `VAULT_TEST_NOW=<seconds since the epoch>`, the clock the
    /// vault reads for sessions and timestamps (`Vault.now`): tests of timeouts set it instead of
    /// sleeping.
    static let clock: Int64? = hook("VAULT_TEST_NOW").flatMap { Int64($0) }

    /// With `VAULT_TEST_HOOKS=1` and `VAULT_TEST_SERVER_URL=<url>`, the server address a logged-in
    /// vault uses instead of the stored one: stands for a database edited after `vault login`
    /// (an address `login` would refuse, a host that no longer resolves).
    public static let serverURLOverride: String? = hook("VAULT_TEST_SERVER_URL")

    /// With `VAULT_TEST_HOOKS=1` and `VAULT_TEST_PULL_PAGE=<n>`, the page size a pull asks the
    /// change feed and the listing for (the crash tests need a pull of several pages).
    public static let pullPage: Int? = hook("VAULT_TEST_PULL_PAGE").flatMap { Int($0) }.map { max($0, 1) }

    public static func crashPoint(_ name: String) {
        guard let at = crashAt, at.name == name else { return }
        if hits.withLock({ $0 += 1; return $0 }) >= at.hit { kill(getpid(), SIGKILL) }
    }

    /// A Swift runtime trap (the signal a failed precondition raises) at `name`, for the tests
    /// that check a crash leaves the terminal usable.
    public static func trapPoint(_ name: String) {
        if let at = trapAt, at == name { fatalError("test trap at \(name)") }
    }
}
