import VaultSyncPlan

/// A fault the network or the device suffered: the sync stops there (what was done stays done).
struct SimFault: Error {}

/// `vault sync` on a simulated device: push (folder deletes held), pull, push what the pull
/// produced, download pinned content — the push through `PushRules`, the pull through
/// `PullRunner` and `SyncPlanner`, as on a real device.
extension SimDevice {
    func sync(_ sim: Simulation) throws {
        guard online else { return }
        for e in state.outbox where e.op == .upload {
            if let b = e.payload.blobId, let t = blobs[b] { sim.committed.insert(t) }
        }
        try push(sim, holdFolderDeletes: true)
        try pull(sim)
        try push(sim, holdFolderDeletes: false)
        try downloadPinned(sim)
    }

    /// The push `vault sync` runs (`PushRunner`), against this device's memory and the model
    /// server.
    func push(_ sim: Simulation, holdFolderDeletes: Bool) throws {
        let runner = PushRunner(holdFolderDeletes: holdFolderDeletes, deviceId: deviceId)
        _ = try runner.run(SimPushStore(device: self, sim: sim), SimPushTransport(device: self, sim: sim))
    }

    func pull(_ sim: Simulation) throws {
        let planner = SyncPlanner(settings: SyncSettings(deviceId: deviceId, deviceName: name, today: "2024-05-01",
                                                         conflictPolicy: sim.policy(self), newId: newId))
        let result = try PullRunner(planner: planner, maxDelete: Int.max, force: true).run(SimSource(sim: sim, device: self), SimStore(device: self, sim: sim))
        sim.messages += result.messages.count
        for m in result.messages { sim.trace("\(name) pull: \(m.kind.rawValue) \(m.path): \(m.text)") }
    }

    /// Pinned files whose content is not here (or older) download the server's head.
    func downloadPinned(_ sim: Simulation) throws {
        for (_, n) in all() where !n.isFolder && n.pinned && (n.contentState == .notDownloaded || n.contentState == .stale) {
            guard let rid = n.remoteId, state.entries(of: n.id).isEmpty else { continue }
            try sim.network.read()
            guard let f = sim.server.files[rid], sim.server.isLive(rid), let c = f.content, c.sha256 == n.sha256,
                  let token = sim.server.blobs[c.blob] else { continue }
            var m = n
            blobs[c.blob] = token
            m.localPath = c.blob; m.contentState = .local
            state.put(m)
        }
    }

    /// The sequence numbers the records of `request` take, as a vault claims them
    /// (`Vault.claimSeqs`): one more than the highest this device sealed or saw for the node, in
    /// its base or in the floor that outlives the base.
    func claimSeqs(remoteId id: String) -> RemoteSeqs {
        let base = try? state.base(remoteId: id)
        let floor = seqFloor[id]
        let next = RemoteSeqs(record: max(base?.recordSeq ?? 0, floor?.record ?? 0) + 1,
                              content: max(base?.contentSeq ?? 0, floor?.content ?? 0) + 1)
        seqFloor[id] = next
        return next
    }

    /// A base about to go: what it saw stays in the floor (`Vault.retireSeqs`).
    func retire(_ remoteId: String) {
        guard let b = try? state.base(remoteId: remoteId) else { return }
        let floor = seqFloor[remoteId] ?? RemoteSeqs()
        seqFloor[remoteId] = RemoteSeqs(record: max(floor.record, b.recordSeq), content: max(floor.content, b.contentSeq))
    }

    func see(_ base: RemoteBase, _ sim: Simulation) {
        if let c = base.content, let t = sim.server.blobs[c.blob] ?? blobs[c.blob] { seen[base.remoteId, default: []].insert(t) }
    }
}

/// A simulated device as a push reads and records it.
final class SimPushStore: PushStore {
    let device: SimDevice
    let sim: Simulation

    init(device: SimDevice, sim: Simulation) { self.device = device; self.sim = sim }

    func outbox() throws -> [OutboxEntry] { device.state.outbox }
    func current(_ entry: OutboxEntry) throws -> OutboxEntry? { device.state.outbox.first { $0.seq == entry.seq } }
    func hasNode(_ id: String) throws -> Bool { try device.state.node(id: id) != nil }
    func target(nodeId: String) throws -> OutboxTarget? { try device.state.target(nodeId: nodeId) }
    func remoteFolderId(ofLocal id: String?) throws -> String? { try device.state.remoteFolderId(ofLocal: id) }
    func holdsAny(remoteIds: [String]) throws -> Bool { remoteIds.contains { (try? device.state.node(remoteId: $0)) ?? nil != nil } }
    func cursor() throws -> Int64? { device.cursor }
    func label(_ e: OutboxEntry, _ target: OutboxTarget?) throws -> String { e.nodeId }

    func clientId(for e: OutboxEntry, proposing id: String) throws -> String {
        var e = e
        if let chosen = device.state.outbox.first(where: { $0.seq == e.seq })?.payload.clientId { return chosen }
        e.payload.clientId = id
        device.state.update(e)
        return id
    }

    func markSent(_ e: OutboxEntry) throws {
        guard var cur = device.state.outbox.first(where: { $0.seq == e.seq }) else { return }
        cur.sentAt = Int64(sim.network.now)
        device.state.update(cur)
    }

    func claimSeqs(remoteId: String, nodeId: String) throws -> RemoteSeqs { device.claimSeqs(remoteId: remoteId) }

    func complete(_ e: OutboxEntry, _ completion: OutboxCompletion, seqs: RemoteSeqs?, base: RemoteBase?) throws {
        try device.state.complete(e, completion, base: base)
        if let base { device.see(base, sim) }
    }

    func mark(_ e: OutboxEntry, _ state: OutboxState, reason: String) throws { device.state.mark(e.seq, state, reason: reason) }
}

/// The model server as a push reaches it (through the network's faults).
final class SimPushTransport: PushTransport {
    let device: SimDevice
    let sim: Simulation

    init(device: SimDevice, sim: Simulation) { self.device = device; self.sim = sim }

    func send(_ request: PushRequest, for e: OutboxEntry, target: OutboxTarget?, label: String, seqs: RemoteSeqs) throws -> PushSent {
        switch request { case .createFile, .newRevision: device.sent.insert(e.requestId); default: break }
        do {
            let answer = try sim.network.send(request, seqs: seqs, from: device)
            sim.trace("\(device.name) push \(e.seq) \(request) -> \(answer)")
            return .answer(answer)
        } catch {
            sim.trace("\(device.name) push \(e.seq) \(request) -> fault"); throw error
        }
    }

    func subtree(of id: String) throws -> [String] { sim.server.subtree(of: id).dropFirst().map(\.id) }
    func newId() -> String { device.newRemoteId() }
    func discardUpload(_ e: OutboxEntry, target: OutboxTarget?, label: String) throws -> PushStep? { nil }
    func entryFinished() throws { try sim.network.maybeCrash() }
}

/// The simulated server as a pull reads it (through the network's faults).
struct SimSource: PullSource {
    let sim: Simulation
    let device: SimDevice
    func startCursor() throws -> Int64 { try sim.network.read(); return sim.server.latest }
    func changes(after cursor: Int64) throws -> ChangesPage? {
        try sim.network.read()
        let page = sim.server.changes(after: cursor)
        sim.trace("\(device.name) changes after \(cursor): " + (page.map { p in p.nodes.map { "\($0.id.suffix(4)) in \($0.parentId?.suffix(4) ?? "-")\($0.trashed ? " trashed" : "") v\($0.version)" }.joined(separator: ", ") + " next \(p.nextCursor)" } ?? "410"))
        return page
    }
    func listing(after token: String?) throws -> ListingPage {
        try sim.network.read()
        let page = sim.server.listing(after: token)
        sim.trace("\(device.name) listing: " + page.nodes.map { "\($0.id.suffix(4)) in \($0.parentId?.suffix(4) ?? "-")" }.joined(separator: ", "))
        return ListingPage(nodes: page.nodes, next: page.next)
    }
    func subtree(of remoteId: String) throws -> [RemoteNode] { try sim.network.read(); return sim.server.subtree(of: remoteId) }
}

/// A simulated device as a pull writes it: each apply is one transaction (a crash comes between two).
final class SimStore: PullStore {
    let device: SimDevice
    let sim: Simulation
    private var saved: (PlanState, Int64?)?

    init(device: SimDevice, sim: Simulation) { self.device = device; self.sim = sim }

    func cursor() throws -> Int64? { device.cursor }
    func planState() throws -> PlanState {
        sim.trace("\(device.name) plan on: " + device.state.outbox.map { "\($0.seq) \($0.op.rawValue) \($0.nodeId) -> \($0.payload.parentId ?? "-")/\($0.payload.name ?? "-") \($0.state.rawValue)" }.joined(separator: "; ")
                  + " | tombstones " + device.state.tombstones.values.map { "\($0.nodeId)=\($0.remoteId ?? "-")" }.sorted().joined(separator: ", "))
        return device.state
    }

    func apply(_ actions: [PlanAction], cursor: Int64?) throws {
        if saved == nil { try sim.network.maybeCrash() }
        for case .dropBase(let id) in actions { device.retire(id) }
        try device.state.apply(actions)
        for a in actions { sim.trace("\(device.name) apply \(a)") }
        for case .setBase(let b) in actions { device.see(b, sim) }
        if let cursor {
            if let old = device.cursor, cursor < old { sim.fail("\(device.name)'s cursor went back from \(old) to \(cursor)") }
            device.cursor = cursor
        }
    }

    func beginListing() throws -> Bool {
        saved = (device.state, device.cursor)
        return false   // the simulation checks every listing the long way
    }

    func endListing(commit: Bool) throws {
        if !commit, let (s, c) = saved { device.state = s; device.cursor = c }
        saved = nil
    }

    /// The simulated server seals every node it holds: nothing is ever refused.
    func quarantined() throws -> Set<String> { [] }
    func quarantine(_ refused: [RefusedNode], clearing: Set<String>) throws {}

    func missing(listed: ListedIds) throws -> [String] {
        device.all().filter { $0.1.remoteId.map { !listed.contains($0) } ?? false }.map(\.1.id)
    }
}
