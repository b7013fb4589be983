import VaultSQL
import VaultSyncPlan

extension Vault {
    /// How many nodes below the root do not lead up to it through folders: a parent that does not
    /// exist or is a file, or a folder inside itself. What a listing committed must have none of.
    ///
    /// One pass over the nodes table in storage order (pages read once): folders are kept with
    /// their parent, files counted per parent, then each folder is followed up to the root
    /// (memoised). A recursive query from the root looked every node up by its folder instead —
    /// a random read of the table per node, about a second of a 100,000-node first pull. With more
    /// than `folderLimit` folders (memory), the recursive query is used.
    func nodesOffTree(folderLimit: Int = 50_000) throws -> Int {
        var parentOf: [String: String] = [:]       // folder id → its parent ("" for none)
        var filesIn: [String: Int] = [:]           // parent id → files in it
        var tooMany = false
        try nodesTable.forEachPlacement { id, parentId, type in
            guard id != Node.rootId else { return true }
            let parent = parentId ?? ""
            if type == .folder {
                parentOf[id] = parent
                if parentOf.count > folderLimit { tooMany = true; return false }
            } else {
                filesIn[parent, default: 0] += 1
            }
            return true
        }
        if tooMany { return try nodesOffTreeByQuery() }
        var leadsUp: [String: Bool] = [Node.rootId: true]
        func reaches(_ start: String) -> Bool {
            var chain: [String] = []
            var cur = start
            var result = false
            while true {
                if let known = leadsUp[cur] { result = known; break }
                // Not a folder (missing, or a file), or walked further than there are folders: a loop.
                guard let up = parentOf[cur], chain.count <= parentOf.count else { break }
                chain.append(cur)
                cur = up
            }
            for c in chain { leadsUp[c] = result }
            return result
        }
        var off = 0
        for id in parentOf.keys where !reaches(id) { off += 1 }
        for (parent, count) in filesIn where !reaches(parent) { off += count }
        return off
    }

    /// `nodesOffTree` by a recursive query from the root down through folders (no memory).
    private func nodesOffTreeByQuery() throws -> Int {
        let counts = try nodesTable.countReachable()
        return counts.all - counts.onTree
    }
}
