import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Crash points for the crash-safety tests: with `VAULT_TEST_HOOKS=1` and
/// `VAULT_TEST_CRASH_AT=<name>`, the process kills itself with SIGKILL at that point, exactly as
/// `kill -9` would. Without both variables this does nothing.
public enum TestHooks {
    static let crashAt: String? = {
        let env = ProcessInfo.processInfo.environment
        guard env["VAULT_TEST_HOOKS"] == "1" else { return nil }
        return env["VAULT_TEST_CRASH_AT"]
    }()

    public static func crashPoint(_ name: String) {
        if let at = crashAt, at == name { kill(getpid(), SIGKILL) }
    }
}
