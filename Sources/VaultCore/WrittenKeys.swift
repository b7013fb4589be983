import VaultSyncPlan

/// The keys a listing wrote into an empty vault (node ids, remote ids, names in folders, bases):
/// a lookup of a key it never saw is answered "absent" without the database. A first pull's
/// lookups are almost all of nodes that do not exist yet, and each one read (and decrypted)
/// index pages of a database far larger than its cache. Answers stay exact: "absent" is never
/// said of a key written, and a "may be there" only costs a query.
/// - An id of its own (a node id, a remote id, a base's id) of 32 lowercase hex digits is
///   answered by the highest one written of its kind: a key above it was never written. The
///   server lists in id order, so the nodes of the next page are all above it (and a node
///   written earlier is a real hit); a listing in another order only costs queries.
/// - Every other key (a name in a folder, a folder's id as a parent, an id of another shape) is
///   kept in a Bloom filter. With the ids out of it, it holds about one key per node: 2 % false
///   positives at 1,000,000 nodes (the six keys of each node made it 53 %).
struct WrittenKeys {
    enum Kind: UInt8 { case nodeId, remoteId, child, parent, base, baseParent }

    /// 2^23 bits (1 MiB), 4 probes.
    private var bits = [UInt64](repeating: 0, count: 1 << 17)
    private static let probes = 4
    /// The highest packed id written, by kind (nodeId, remoteId, base).
    private var highest: [PackedID?] = [nil, nil, nil]

    /// The slot in `highest` of a key of `kind` that is an id of its own, when it is one.
    private static func ordered(_ kind: Kind, _ key: String, _ second: String) -> (slot: Int, id: PackedID)? {
        guard second.isEmpty else { return nil }
        let slot: Int
        switch kind {
        case .nodeId: slot = 0
        case .remoteId: slot = 1
        case .base: slot = 2
        case .child, .parent, .baseParent: return nil
        }
        return PackedID(key).map { (slot, $0) }
    }

    mutating func insert(_ kind: Kind, _ key: String, _ second: String = "") {
        if let (slot, id) = Self.ordered(kind, key, second) {
            if let h = highest[slot], !(h < id) { return }
            highest[slot] = id
            return
        }
        var (h1, h2) = Self.hashes(kind, key, second)
        for _ in 0..<Self.probes {
            let bit = Int(h1 & UInt64(bits.count * 64 - 1))
            bits[bit >> 6] |= 1 << UInt64(bit & 63)
            h1 &+= h2
        }
    }

    func mayContain(_ kind: Kind, _ key: String, _ second: String = "") -> Bool {
        if let (slot, id) = Self.ordered(kind, key, second) {
            guard let h = highest[slot] else { return false }
            return !(h < id)
        }
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
