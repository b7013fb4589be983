internal import CLinuxShims

/// Process-wide protections for a process that holds keys.
public enum ProcessHardening {
    /// No core dumps, not dumpable (no same-user ptrace). Best effort; returns false if refused.
    @discardableResult
    public static func apply() -> Bool { CLinuxShims_disable_core_dumps() == 0 }
}
