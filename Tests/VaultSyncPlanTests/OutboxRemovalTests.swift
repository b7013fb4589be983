import XCTest
import VaultTestSupport
import VaultSyncPlan

/// A removal's outbox rewrite (rules R1–R6) depends only on the entries `OutboxRules.concerns`
/// keeps, so the vault reads only those (a file's removal no longer reads the whole outbox):
/// over random trees, outboxes and removals, the rules decide the same from the kept entries as
/// from the whole outbox.
final class OutboxRemovalTests: XCTestCase {
    func testARemovalDecidesTheSameFromTheEntriesThatConcernIt() {
        let seed = ProcessInfo.processInfo.environment["VAULT_TEST_SEED"].flatMap(UInt64.init) ?? 20261207
        print("testARemovalDecidesTheSameFromTheEntriesThatConcernIt: seed \(seed) (VAULT_TEST_SEED replays it)")
        var g = SeededGenerator(seed: seed)
        func pick(_ n: Int) -> Int { Int(g.next() % UInt64(n)) }
        var decided = 0, withOthers = 0
        for _ in 0..<400 {
            // A tree: folders f0… under the root or each other, files under any folder.
            var nodes: [Node] = []
            let folderCount = 1 + pick(6), fileCount = pick(10)
            for i in 0..<folderCount {
                let parent = i == 0 || pick(3) == 0 ? Node.rootId : "f\(pick(i))"
                nodes.append(node("f\(i)", parent: parent, folder: true, synced: pick(2) == 0))
            }
            for i in 0..<fileCount { nodes.append(node("x\(i)", parent: "f\(pick(folderCount))", folder: false, synced: pick(2) == 0)) }
            // An outbox: entries of any node, some placing into a folder the node is no longer in.
            let ops: [OutboxOp] = [.createFolder, .upload, .move, .delete, .discardUpload]
            var entries: [OutboxEntry] = []
            for seq in 1...Int64(1 + pick(25)) {
                let n = nodes[pick(nodes.count)]
                let op = n.isFolder ? [OutboxOp.createFolder, .move, .delete][pick(3)] : ops[pick(ops.count)]
                let parent = pick(3) == 0 ? "f\(pick(folderCount))" : n.parentId
                entries.append(OutboxEntry(seq: seq, op: op, nodeId: n.id,
                                           payload: OutboxPayload(name: n.name, parentId: parent, remoteId: n.remoteId,
                                                                  replacesMove: op == .delete && pick(2) == 0 ? true : nil),
                                           baseVersion: 1, requestId: "req\(seq)", state: pick(5) == 0 ? .cancelled : .pending,
                                           sentAt: pick(3) == 0 ? 1 : nil))
            }
            // A removal: one node and everything under it, the top first.
            let top = nodes[pick(nodes.count)]
            var removed = [top], frontier = [top.id]
            while let f = frontier.popLast() {
                for c in nodes where c.parentId == f { removed.append(c); frontier.append(c.id) }
            }
            let ids = Set(removed.map(\.id)), folders = Set(removed.filter(\.isFolder).map(\.id))
            let kept = entries.filter { OutboxRules.concerns($0, removing: ids, folders: folders) }
            if kept.contains(where: { !ids.contains($0.nodeId) }) { withOthers += 1 }
            let session: (String) -> String? = { id in id.hasSuffix("3") || id.hasSuffix("7") ? "upload-\(id)" : nil }
            let whole = OutboxRules.removal(of: removed, entries: entries, session: session)
            let fromKept = OutboxRules.removal(of: removed, entries: kept, session: session)
            XCTAssertEqual(whole, fromKept, "seed \(seed): removing \(top.id) with \(entries.count) entries")
            if !whole.drop.isEmpty || !whole.rewrite.isEmpty || !whole.tombstoned.isEmpty { decided += 1 }
        }
        // The cases exercise the rules, including entries of other nodes that place into a removed folder.
        XCTAssertGreaterThan(decided, 100)
        XCTAssertGreaterThan(withOthers, 20)
    }

    private func node(_ id: String, parent: String, folder: Bool, synced: Bool) -> Node {
        Node(id: id, remoteId: synced ? "r" + id : nil, parentId: parent, name: id, type: folder ? .folder : .file, size: 1, version: 1,
             modifiedAt: 1, mimeType: nil, contentState: .local, localPath: nil, pinned: false, lastAccessed: nil,
             pendingOp: nil, localVersion: 1, sha256: nil)
    }
}
