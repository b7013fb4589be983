import VaultSyncPlan

/// A set of blob ids, each vault-made id (32 lowercase hex digits) kept as its 16 bytes
/// (`PackedID`), any other as its text: what `vault doctor` collects of a million files.
struct BlobIdSet {
    private var packed = Set<PackedID>()
    private var other = Set<String>()

    mutating func insert(_ id: String) {
        if let p = PackedID(id) { packed.insert(p) } else { other.insert(id) }
    }

    func contains(_ id: String) -> Bool {
        if let p = PackedID(id) { return packed.contains(p) }
        return other.contains(id)
    }
}
