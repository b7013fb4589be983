/// Size padding of uploaded content (SECURITY.md "Size padding"): with `padme`, an upload of a
/// `Z`-byte sealed blob sends `padme(Z)` bytes (the blob, then zeros), so the server learns only
/// the size class (Nikitin et al., PURBs). A reader reads `[0, Z)` and accepts a stored size of
/// exactly `Z` or `padme(Z)`.
public enum RemotePadding: String, Sendable, Codable {
    case none, padme

    /// Padmé(L): with E = ⌊log2 L⌋ and S = ⌊log2 E⌋ + 1, the low E − S bits of L rounded up to
    /// zero (at most about 12 % more; L below 2 unchanged).
    public static func padme(_ length: UInt64) -> UInt64 {
        guard length >= 2 else { return length }
        let e = UInt64(63 - length.leadingZeroBitCount)            // ⌊log2 L⌋ ≥ 1
        let s = UInt64(63 - e.leadingZeroBitCount) + 1              // ⌊log2 E⌋ + 1
        let lastBits = e - s
        let mask: UInt64 = (1 << lastBits) - 1
        return (length + mask) & ~mask
    }

    /// The bytes an upload of a `sealedSize`-byte blob sends.
    public func uploadLength(sealedSize: UInt64) -> UInt64 { self == .padme ? Self.padme(sealedSize) : sealedSize }
}
