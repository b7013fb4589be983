import VaultSyncPlan

/// One simulated device: its local state (a `PlanState` over nothing: all in memory), its blobs,
/// its cursor, and the user operations a vault offers, each changing the outbox as the vault's
/// own operations do (`OutboxRules`).
public final class SimDevice {
    let index: Int
    let deviceId: String
    let name: String
    var state = PlanState(view: EmptyLocalView(), outbox: [], tombstones: [])
    var cursor: Int64?
    /// Content token of each local blob.
    var blobs: [String: UInt64] = [:]
    /// Request ids of uploads that were sent at least once (their session started: rule E3 no
    /// longer merges new content into them).
    var sent = Set<String>()
    var online = true
    /// Content tokens this device saw as a node's content, by remote id (a delete by this device
    /// of that node then takes them knowingly).
    var seen: [String: Set<UInt64>] = [:]
    /// Content tokens this device wrote, by the local node it wrote them to.
    var written: [String: Set<UInt64>] = [:]
    /// The highest sequence numbers this device sealed, or saw in a base since dropped, by remote
    /// id (the vault's `seq_floor`).
    var seqFloor: [String: RemoteSeqs] = [:]
    private var counter = 0

    init(index: Int) {
        self.index = index
        deviceId = "device-\(index)"
        name = "dev\(index)"
    }

    func newId() -> String { counter += 1; return "d\(index)x\(counter)" }

    /// A remote id this device chooses for a node it creates: 32 lowercase hex, unique per device.
    func newRemoteId() -> String {
        counter += 1
        let digits = String(counter, radix: 16), dev = String(index, radix: 16)
        return String(repeating: "0", count: 30 - digits.count) + digits + String(repeating: "0", count: 2 - dev.count) + dev
    }

    func node(_ path: String) -> Node? {
        var cur = try! state.node(id: Node.rootId)!
        for part in path.split(separator: "/") {
            guard let next = try! state.child(of: cur.id, named: String(part)) else { return nil }
            cur = next
        }
        return cur
    }

    /// The local tree: path → type and content (the node's SHA-256).
    func tree() -> [String: SimEntry] {
        var out: [String: SimEntry] = [:]
        var queue: [(String, String)] = [(Node.rootId, "")]
        while let (id, path) = queue.popLast() {
            for c in (try? state.children(of: id)) ?? [] {
                let p = path + "/" + c.name
                out[p] = c.isFolder ? .folder : .file(c.sha256 ?? "")
                if c.isFolder { queue.append((c.id, p)) }
            }
        }
        return out
    }

    /// Every node under the root, with its path.
    func all() -> [(String, Node)] {
        var out: [(String, Node)] = []
        var queue: [(String, String)] = [(Node.rootId, "")]
        while let (id, path) = queue.popLast() {
            for c in (try? state.children(of: id)) ?? [] {
                out.append((path + "/" + c.name, c))
                if c.isFolder { queue.append((c.id, path + "/" + c.name)) }
            }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    // MARK: - User operations (false: not possible here)

    func mkdir(in folder: Node, name: String) -> Bool {
        guard (try? state.child(of: folder.id, named: name)) ?? nil == nil else { return false }
        let n = Node(id: newId(), remoteId: nil, parentId: folder.id, name: name, type: .folder, size: 0, version: 0, modifiedAt: 0,
                     mimeType: nil, contentState: .local, localPath: nil, pinned: folder.pinned, lastAccessed: nil,
                     pendingOp: .create, localVersion: 1, sha256: nil)
        state.put(n)
        state.append(.createFolder, nodeId: n.id, payload: OutboxPayload(name: name, parentId: folder.id), baseVersion: nil, requestId: newId())
        return true
    }

    func put(in folder: Node, name: String, token: UInt64) -> Bool {
        guard (try? state.child(of: folder.id, named: name)) ?? nil == nil else { return false }
        let blob = newId()
        blobs[blob] = token
        let n = Node(id: newId(), remoteId: nil, parentId: folder.id, name: name, type: .file, size: token % 97, version: 0,
                     modifiedAt: 0, mimeType: nil, contentState: .local, localPath: blob, pinned: folder.pinned, lastAccessed: nil,
                     pendingOp: .upload, localVersion: 1, sha256: SimContent.sha(token))
        state.put(n)
        written[n.id, default: []].insert(token)
        state.append(.upload, nodeId: n.id, payload: OutboxPayload(name: name, parentId: folder.id, blobId: blob, size: n.size, sha256: n.sha256),
                     baseVersion: nil, requestId: newId())
        return true
    }

    /// `put --replace`: new content for a file (rules E3/E4). Returns the content it replaces
    /// before it was ever sent (E3: only the newest offline version is uploaded).
    @discardableResult
    func replace(_ file: Node, token: UInt64) -> UInt64? {
        var superseded: UInt64?
        var n = file
        let blob = newId()
        blobs[blob] = token
        n.localPath = blob; n.sha256 = SimContent.sha(token); n.size = token % 97; n.contentState = .local
        n.localVersion += 1; n.pendingOp = .upload
        state.put(n)
        written[n.id, default: []].insert(token)
        let session: (String) -> String? = { self.sent.contains($0) ? $0 : nil }
        if var e = OutboxRules.mergeTarget(n, entries: state.entries(of: n.id), session: session) {
            superseded = e.payload.blobId.flatMap { blobs[$0] }
            e.payload.blobId = blob; e.payload.size = n.size; e.payload.sha256 = n.sha256; e.requestId = newId()
            if e.state == .failed { e.state = .pending; e.lastError = nil }
            state.update(e)
        } else {
            state.append(.upload, nodeId: n.id, payload: OutboxPayload(name: n.name, parentId: n.parentId, remoteId: n.remoteId, blobId: blob,
                                                                       size: n.size, sha256: n.sha256), baseVersion: n.version, requestId: newId())
        }
        return superseded
    }

    func move(_ x: Node, into folder: Node, name: String) -> Bool {
        guard x.id != Node.rootId, (try? state.child(of: folder.id, named: name)) ?? nil == nil,
              !((try? state.isWithin(folder.id, x.id)) ?? true) else { return false }
        var n = x
        n.parentId = folder.id; n.name = name; n.pendingOp = n.pendingOp ?? .move
        state.put(n)
        state.append(.move, nodeId: n.id, payload: OutboxPayload(name: name, parentId: folder.id, remoteId: n.remoteId),
                     baseVersion: n.version, requestId: newId())
        return true
    }

    /// `rm` / `rm -r`. Returns the content tokens this removes knowingly: a file's history up to
    /// the version this device knows, and its pending content.
    func remove(_ x: Node, server: SimServer) throws -> Set<UInt64> {
        guard x.id != Node.rootId else { return [] }
        let removed = [x] + (x.isFolder ? try state.descendants(of: x.id) : [])
        var knew = Set<UInt64>()
        for n in removed {
            if let r = n.remoteId {
                knew.formUnion(seen[r] ?? [])
                let known = try state.base(remoteId: r)?.contentSeq ?? 0
                for c in server.files[r]?.revisions ?? [] where c.seq <= known { if let t = server.blobs[c.blob] { knew.insert(t) } }
            }
            if let b = n.localPath, let t = blobs[b] { knew.insert(t) }
            knew.formUnion(written[n.id] ?? [])
            for (b, owner) in state.blobOwners where owner == n.id { if let t = blobs[b] { knew.insert(t) } }
            for e in state.entries(of: n.id) { if let b = e.payload.blobId, let t = blobs[b] { knew.insert(t) } }
        }
        try state.removeLocally(removed, session: { self.sent.contains($0) ? $0 : nil }, newRequestId: newId)
        return knew
    }

    func setPinned(_ x: Node, _ pinned: Bool) throws {
        for n in [x] + (x.isFolder ? try state.descendants(of: x.id) : []) {
            var m = n
            m.pinned = pinned
            state.put(m)
        }
    }

    /// Drops a file's local content (never pending content): it stays, NOT_DOWNLOADED.
    func evict(_ x: Node) {
        guard !x.isFolder, !x.pinned, x.remoteId != nil, x.contentState == .local || x.contentState == .stale,
              !state.entries(of: x.id).contains(where: { $0.op == .upload }) else { return }
        var n = x
        n.contentState = .notDownloaded; n.localPath = nil
        state.put(n)
    }
}
