/// A Bloom filter of the keys a listing wrote into an empty vault (node ids, remote ids, names in
/// folders, bases): a lookup of a key it never saw is answered "absent" without the database. A
/// first pull's lookups are almost all of nodes that do not exist yet, and each one read (and
/// decrypted) index pages of a database far larger than its cache. False positives only cost a
/// query; there are no false negatives, so answers stay exact.
struct WrittenKeys {
    enum Kind: UInt8 { case nodeId, remoteId, child, parent, base, baseParent }

    /// 2^23 bits (1 MiB): about 0.1 % false positives for the six keys of 100,000 nodes.
    private var bits = [UInt64](repeating: 0, count: 1 << 17)
    private static let probes = 4

    mutating func insert(_ kind: Kind, _ key: String, _ second: String = "") {
        var (h1, h2) = Self.hashes(kind, key, second)
        for _ in 0..<Self.probes {
            let bit = Int(h1 & UInt64(bits.count * 64 - 1))
            bits[bit >> 6] |= 1 << UInt64(bit & 63)
            h1 &+= h2
        }
    }

    func mayContain(_ kind: Kind, _ key: String, _ second: String = "") -> Bool {
        var (h1, h2) = Self.hashes(kind, key, second)
        for _ in 0..<Self.probes {
            let bit = Int(h1 & UInt64(bits.count * 64 - 1))
            if bits[bit >> 6] & (1 << UInt64(bit & 63)) == 0 { return false }
            h1 &+= h2
        }
        return true
    }

    private static func hashes(_ kind: Kind, _ key: String, _ second: String) -> (UInt64, UInt64) {
        var h = Hasher()
        h.combine(kind.rawValue); h.combine(key); h.combine(second)
        let a = UInt64(bitPattern: Int64(h.finalize()))
        // A second, independent-enough hash from the first (double hashing); odd so probes differ.
        return (a, (a >> 29 | a << 35) &* 0x9E37_79B9_7F4A_7C15 | 1)
    }
}
