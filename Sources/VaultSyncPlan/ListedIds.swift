/// The ids a full listing showed, kept as compactly as they come: an id of 32 lowercase hex digits
/// (every id this project makes) as its 16 bytes, any other as a string. The server lists in id
/// order, so packed ids arrive sorted and are kept in fixed-size sorted blocks (searched by
/// bisection, never copied to grow); ids out of order go to a set instead. A first pull of 100,000
/// nodes held them as a set of strings, about 10 MB at its peak; as blocks, 1.6 MB.
public struct ListedIds: Sendable {
    private static let blockSize = 8192
    /// Packed ids in increasing order, in blocks of `blockSize` (the last one filling).
    private var blocks: [[PackedID]] = []
    private var unordered = Set<PackedID>()
    private var other = Set<String>()

    public init() {}

    public init<S: Sequence>(_ ids: S) where S.Element == String {
        for id in ids { insert(id) }
    }

    public mutating func insert(_ id: String) {
        guard let p = PackedID(id) else { other.insert(id); return }
        if let last = blocks.last?.last, !(last < p) {
            if last != p, !contains(p) { unordered.insert(p) }
            return
        }
        if blocks.isEmpty || blocks[blocks.count - 1].count == Self.blockSize {
            blocks.append([]); blocks[blocks.count - 1].reserveCapacity(Self.blockSize)
        }
        blocks[blocks.count - 1].append(p)
    }

    public func contains(_ id: String) -> Bool {
        guard let p = PackedID(id) else { return other.contains(id) }
        return contains(p)
    }

    private func contains(_ p: PackedID) -> Bool {
        if unordered.contains(p) { return true }
        // The last block whose first id is not above p, then p within it.
        var lo = 0, hi = blocks.count
        while lo < hi { let mid = (lo + hi) / 2; if p < blocks[mid][0] { hi = mid } else { lo = mid + 1 } }
        guard lo > 0 else { return false }
        let block = blocks[lo - 1]
        var a = 0, b = block.count
        while a < b { let mid = (a + b) / 2; if block[mid] < p { a = mid + 1 } else { b = mid } }
        return a < block.count && block[a] == p
    }
}
