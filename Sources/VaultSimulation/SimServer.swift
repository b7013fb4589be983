import VaultSyncPlan

/// An in-memory model of the server's semantics (docs/server.md, docs/openapi.yaml): one id per
/// node, a version per node bumped by every change, `If-Match` on every change of a node, one
/// live name per folder, a folder's trash taking what is below it (nothing below a trashed folder
/// can be written, only moved out), a change feed with cursors and a bounded history (an older
/// cursor is 410), every revision kept, and the flat listing of live nodes by id.
///
/// Names and records are kept decoded: the codec is tested on its own; the simulation is about
/// what the planner and the push decide. The sequence numbers are the ones the device sealed
/// (`RemoteSeqs`, claimed by the push), stored as they came, as the real server stores the sealed records: a device that
/// seals one lower than another device has seen makes that device's pull refuse it as a rollback,
/// as the real codec does.
public final class SimServer {
    struct File {
        var id: String
        var parent: String?
        var name: String
        var isFolder: Bool
        var version: Int64
        var trashed: Bool
        var recordSeq: Int64
        var recordDevice: String
        var content: ContentRecord?
        /// Every content this file ever had, oldest first (the head last).
        var revisions: [ContentRecord]
    }

    var files: [String: File] = [Node.rootId: File(id: Node.rootId, parent: nil, name: "", isFolder: true, version: 1, trashed: false,
                                                   recordSeq: 0, recordDevice: "", content: nil, revisions: [])]
    private(set) var feed: [(cursor: Int64, node: RemoteNode)] = []
    private(set) var latest: Int64 = 0
    private(set) var prunedThrough: Int64 = 0
    /// Change entries kept (older cursors answer 410).
    let keepChanges: Int
    /// Entries per page of the feed and the listing.
    let pageSize: Int
    /// Plaintext (a content token) of every sealed blob uploaded, by blob id.
    private(set) var blobs: [String: UInt64] = [:]

    public init(keepChanges: Int, pageSize: Int) { self.keepChanges = keepChanges; self.pageSize = pageSize }

    func remote(_ f: File) -> RemoteNode {
        let record = f.id == Node.rootId ? nil
            : NodeRecord(device: f.recordDevice, mtime: 0, name: f.name, parent: f.parent ?? Node.rootId, seq: f.recordSeq, isFolder: f.isFolder)
        return RemoteNode(id: f.id, parentId: f.parent, name: f.name, isFolder: f.isFolder, version: f.version, trashed: f.trashed,
                          record: record, content: f.content, storedSize: f.content?.sealedSize ?? 0)
    }

    /// Whether a folder above `id` is trashed.
    func underTrash(_ id: String) -> Bool {
        var cur = files[id]?.parent
        var steps = 0
        while let c = cur, steps < 100_000 {
            if files[c]?.trashed != false { return true }
            cur = files[c]?.parent
            steps += 1
        }
        return false
    }

    /// Whether a change after `cursor` touched a node that is below folder `folder` now, with no
    /// trashed folder between them (the check of a folder delete that names its cursor).
    func changedBelow(_ folder: String, after cursor: Int64) -> Bool {
        Set(feed.filter { $0.cursor > cursor }.map(\.node.id)).contains { id in
            guard let f = files[id], !f.trashed else { return false }
            var cur = f.parent
            var steps = 0
            while let c = cur, steps < 100_000 {
                if c == folder { return true }
                guard let p = files[c], !p.trashed else { return false }
                cur = p.parent
                steps += 1
            }
            return false
        }
    }

    /// Alive: not trashed, and no folder above it is.
    func isLive(_ id: String) -> Bool { files[id].map { !$0.trashed && !underTrash(id) } ?? false }

    private func changed(_ f: File) {
        files[f.id] = f
        latest += 1
        feed.append((latest, remote(f)))
        while feed.count > keepChanges { prunedThrough = feed.removeFirst().cursor }
    }

    private func nameFree(_ name: String, in parent: String, excluding id: String? = nil) -> Bool {
        !files.values.contains { $0.parent == parent && $0.name == name && !$0.trashed && $0.id != id }
    }

    private func liveFolder(_ id: String) -> Bool { (files[id]?.isFolder ?? false) && isLive(id) }

    private func newContent(blob: String, token: UInt64, device: String, seq: Int64) -> ContentRecord {
        blobs[blob] = token
        return ContentRecord(blob: blob, device: device, mime: "application/octet-stream", mtime: 0, sealedSize: 40 + Int64(token % 97),
                             seq: seq, sha256: SimContent.sha(token), size: Int64(token % 97))
    }

    /// Applies one request from `device`, whose records carry `seqs`; `token` gives the content a
    /// blob holds.
    func handle(_ request: PushRequest, device: String, seqs: RemoteSeqs, token: (String) -> UInt64) -> PushAnswer {
        switch request {
        case let .createFolder(id, parent, name), let .createFile(id, parent, name, _):
            if let f = files[id] { return .idTaken(remote(f)) }
            guard liveFolder(parent) else { return .parentGone }
            guard nameFree(name, in: parent) else { return .nameTaken }
            var f = File(id: id, parent: parent, name: name, isFolder: true, version: 1, trashed: false, recordSeq: seqs.record,
                         recordDevice: device, content: nil, revisions: [])
            if case let .createFile(_, _, _, blob) = request {
                f.isFolder = false
                f.content = newContent(blob: blob, token: token(blob), device: device, seq: seqs.content)
                f.revisions = [f.content!]
            }
            changed(f)
            return .ok(remote(f))
        case let .newRevision(id, base, blob):
            guard var f = files[id], !f.isFolder else { return .notFound }
            guard f.version == base else { return .stale(remote(f)) }
            guard !f.trashed else { return .stale(remote(f)) }
            guard !underTrash(id) else { return .parentGone }
            f.content = newContent(blob: blob, token: token(blob), device: device, seq: seqs.content)
            f.revisions.append(f.content!)
            f.version += 1
            changed(f)
            return .ok(remote(f))
        case let .move(id, base, parent, name):
            guard var f = files[id], id != Node.rootId else { return .notFound }
            guard f.version == base else { return .stale(remote(f)) }
            guard !underTrash(id) else { return .parentGone }
            guard liveFolder(parent) else { return .parentGone }
            var up: String? = parent
            while let u = up { if u == id { return .refused("a folder cannot move into itself") }; up = files[u]?.parent }
            guard f.trashed || nameFree(name, in: parent, excluding: id) else { return .nameTaken }
            f.parent = parent; f.name = name; f.version += 1; f.recordSeq = seqs.record; f.recordDevice = device
            changed(f)
            return .ok(remote(f))
        case let .delete(id, base, decidedAt):
            guard var f = files[id], id != Node.rootId else { return .notFound }
            guard f.version == base else { return .stale(remote(f)) }
            if f.trashed { return .ok(remote(f)) }
            if f.isFolder, let c = decidedAt, c < prunedThrough || changedBelow(id, after: c) { return .subtreeChanged }
            f.trashed = true; f.version += 1
            changed(f)
            return .ok(remote(f))
        }
    }

    /// The changes after `cursor`, one page; nil when the cursor is older than the history kept.
    func changes(after cursor: Int64) -> ChangesPage? {
        guard cursor >= prunedThrough else { return nil }
        let rows = feed.filter { $0.cursor > cursor }
        let page = Array(rows.prefix(pageSize))
        let more = rows.count > pageSize
        return ChangesPage(nodes: page.map(\.node), nextCursor: more ? page.last!.cursor : max(cursor, latest), hasMore: more)
    }

    /// A page of live nodes (not below a trashed folder) by id, after `token`.
    func listing(after token: String?) -> (nodes: [RemoteNode], next: String?) {
        let ids = files.keys.filter { $0 != Node.rootId && $0 > (token ?? "") && isLive($0) }.sorted()
        let page = Array(ids.prefix(pageSize))
        return (page.map { remote(files[$0]!) }, ids.count > pageSize ? page.last : nil)
    }

    /// Folder `id` and every live node below it.
    func subtree(of id: String) -> [RemoteNode] {
        guard let top = files[id], isLive(id) else { return [] }
        var out = [remote(top)]
        var queue = [id]
        while let p = queue.popLast() {
            for f in files.values where f.parent == p && !f.trashed {
                out.append(remote(f))
                if f.isFolder { queue.append(f.id) }
            }
        }
        return out
    }

    /// The live tree: path → type and content.
    func tree() -> [String: SimEntry] {
        var out: [String: SimEntry] = [:]
        var queue: [(String, String)] = [(Node.rootId, "")]
        while let (id, path) = queue.popLast() {
            for f in files.values where f.parent == id && !f.trashed {
                let p = path + "/" + f.name
                out[p] = f.isFolder ? .folder : .file(f.content?.sha256 ?? "")
                if f.isFolder { queue.append((f.id, p)) }
            }
        }
        return out
    }

    /// Content tokens reachable in the live tree: heads and every revision of live files.
    func reachable() -> Set<UInt64> {
        var out = Set<UInt64>()
        for f in files.values where !f.isFolder && isLive(f.id) {
            for r in f.revisions { if let t = blobs[r.blob] { out.insert(t) } }
        }
        return out
    }
}

/// A node of a tree as the simulation compares it.
public enum SimEntry: Equatable, CustomStringConvertible {
    case folder
    case file(String)
    public var description: String { if case .file(let s) = self { return "file \(s)" }; return "folder" }
}

/// Content in the simulation: a token stands for the plaintext of a write.
enum SimContent {
    static func sha(_ token: UInt64) -> String { "sha-\(token)" }
}
