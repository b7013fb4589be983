/// An id of exactly 32 lowercase hex digits (every node and blob id this project makes) as its
/// 16 bytes. Any other id has no packed form, so each id has one form and two ids share a form
/// only when they are equal.
public struct PackedID: Hashable, Comparable, Sendable {
    public let hi: UInt64, lo: UInt64

    public init(hi: UInt64, lo: UInt64) { self.hi = hi; self.lo = lo }

    /// The packed form of `id`; nil for an id that is not 32 lowercase hex digits.
    public init?(_ id: String) {
        var hi: UInt64 = 0, lo: UInt64 = 0, n = 0
        for c in id.utf8 {
            let v: UInt8
            switch c {
            case 48...57: v = c - 48
            case 97...102: v = c - 87
            default: return nil
            }
            guard n < 32 else { return nil }
            if n < 16 { hi = hi << 4 | UInt64(v) } else { lo = lo << 4 | UInt64(v) }
            n += 1
        }
        guard n == 32 else { return nil }
        self.init(hi: hi, lo: lo)
    }

    /// The id as text again.
    public var string: String {
        String(unsafeUninitializedCapacity: 32) { out in
            for k in 0..<16 {
                out[k] = Self.digits[Int(hi >> UInt64(60 - 4 * k) & 15)]
                out[16 + k] = Self.digits[Int(lo >> UInt64(60 - 4 * k) & 15)]
            }
            return 32
        }
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func < (a: PackedID, b: PackedID) -> Bool { a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo }
}
