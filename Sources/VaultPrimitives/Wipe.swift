#if canImport(Glibc)
import Glibc
#endif

extension Array where Element: FixedWidthInteger {
    /// Zeroes the array's bytes in place with `explicit_bzero`, which the optimiser may not drop
    /// (a loop of stores into an array about to be freed may be). For secrets that had to pass
    /// through a plain array (a password read from a terminal, a key pragma); `SecureBytes` is
    /// the place for them wherever it can be.
    public mutating func wipe() {
        withUnsafeMutableBytes { if let base = $0.baseAddress, $0.count > 0 { explicit_bzero(base, $0.count) } }
    }
}
