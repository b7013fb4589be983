/// The ids a full listing showed, kept as compactly as they come: an id of 32 lowercase hex digits
/// (every id this project makes) as its 16 bytes, any other as a string. A first pull of 100,000
/// nodes held them as strings, about 10 MB of its peak memory; packed, about 2 MB.
public struct ListedIds: Sendable {
    private struct Packed: Hashable, Sendable { let hi: UInt64, lo: UInt64 }
    private var packed = Set<Packed>()
    private var other = Set<String>()

    public init() {}

    public init<S: Sequence>(_ ids: S) where S.Element == String {
        for id in ids { insert(id) }
    }

    public var count: Int { packed.count + other.count }

    public mutating func insert(_ id: String) {
        if let p = Self.pack(id) { packed.insert(p) } else { other.insert(id) }
    }

    public func contains(_ id: String) -> Bool {
        if let p = Self.pack(id) { return packed.contains(p) }
        return other.contains(id)
    }

    /// The 16 bytes of an id of exactly 32 lowercase hex digits; nil for any other id (so each id
    /// has one form, and two ids share a form only when they are equal).
    private static func pack(_ id: String) -> Packed? {
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
        return n == 32 ? Packed(hi: hi, lo: lo) : nil
    }
}
