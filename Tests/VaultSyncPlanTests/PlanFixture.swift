import VaultSyncPlan
import XCTest

/// Numbered ids (`id1`, `id2`, …) for the planner's `newId`.
final class IdSource: @unchecked Sendable {
    private var n = 0
    func next() -> String { n += 1; return "id\(n)" }
}

/// One device's state in memory, built path by path, and remote nodes as another device's
/// changes show them.
struct PlanFixture {
    static let me = "dev-me", other = "dev-other"
    var state = PlanState(view: EmptyLocalView(), outbox: [], tombstones: [])
    let ids = IdSource()
    var policy = ConflictPolicy.keepBoth
    var requests = 0

    var settings: SyncSettings {
        SyncSettings(deviceId: Self.me, deviceName: "laptop", today: "2024-05-01", conflictPolicy: policy, newId: ids.next)
    }

    static func remoteId(_ path: String) -> String { "r" + path.replacingOccurrences(of: "/", with: "_") }

    static func split(_ path: String) -> (String, String) {
        let parts = path.split(separator: "/").map(String.init)
        return ("/" + parts.dropLast().joined(separator: "/"), parts.last ?? "")
    }

    /// The node at `path` in the state.
    func node(_ path: String) -> Node? {
        var cur = try! state.node(id: Node.rootId)!
        for part in path.split(separator: "/") {
            guard let next = try! state.child(of: cur.id, named: String(part)) else { return nil }
            cur = next
        }
        return cur
    }

    func content(_ blob: String, seq: Int64 = 1, device: String = PlanFixture.me, size: Int64 = 10) -> ContentRecord {
        ContentRecord(blob: blob, device: device, mime: "application/octet-stream", mtime: 1, sealedSize: size + 40, seq: seq,
                      sha256: "sha-" + blob, size: size)
    }

    /// A node that is on the server and unchanged here (with its base); `id` replaces the remote
    /// id made from its path (the planner takes a page's nodes in the order of their ids).
    @discardableResult
    mutating func synced(_ path: String, id: String? = nil, folder: Bool = false, blob: String? = nil, version: Int64 = 1,
                         contentState: ContentState = .local) -> Node {
        let (parentPath, name) = Self.split(path)
        let parent = node(parentPath)!
        let rid = id ?? Self.remoteId(path)
        let b = blob ?? "b" + rid
        let c = folder ? nil : content(b)
        let n = Node(id: "L" + rid, remoteId: rid, parentId: parent.id, name: name, type: folder ? .folder : .file,
                     size: folder ? 0 : 10, version: version, modifiedAt: 1, mimeType: nil,
                     contentState: folder ? .local : contentState, localPath: folder || contentState == .notDownloaded ? nil : b,
                     pinned: false, lastAccessed: nil, pendingOp: nil, localVersion: 1, sha256: c?.sha256)
        state.put(n)
        state.setBase(RemoteBase(remoteId: rid, parentId: parent.remoteId ?? Node.rootId, name: name, isFolder: folder,
                                 version: version, recordSeq: 1, contentSeq: folder ? 0 : 1, content: c))
        return n
    }

    /// A file made here and not yet uploaded (with its upload entry).
    @discardableResult
    mutating func newFile(_ path: String, blob: String) -> Node {
        let (parentPath, name) = Self.split(path)
        let parent = node(parentPath)!
        let n = Node(id: "N" + path, remoteId: nil, parentId: parent.id, name: name, type: .file, size: 10, version: 0,
                     modifiedAt: 2, mimeType: nil, contentState: .local, localPath: blob, pinned: false, lastAccessed: nil,
                     pendingOp: .upload, localVersion: 1, sha256: "sha-" + blob)
        state.put(n)
        state.append(.upload, nodeId: n.id, payload: OutboxPayload(name: name, parentId: parent.id, blobId: blob, size: 10, sha256: n.sha256),
                     baseVersion: nil, requestId: "req-" + path)
        return n
    }

    /// A folder made here and not yet on the server.
    @discardableResult
    mutating func newFolder(_ path: String) -> Node {
        let (parentPath, name) = Self.split(path)
        let parent = node(parentPath)!
        let n = Node(id: "N" + path, remoteId: nil, parentId: parent.id, name: name, type: .folder, size: 0, version: 0,
                     modifiedAt: 2, mimeType: nil, contentState: .local, localPath: nil, pinned: false, lastAccessed: nil,
                     pendingOp: .create, localVersion: 1, sha256: nil)
        state.put(n)
        state.append(.createFolder, nodeId: n.id, payload: OutboxPayload(name: name, parentId: parent.id), baseVersion: nil,
                     requestId: "req-" + path)
        return n
    }

    /// A new version of a synced file here (pending upload).
    mutating func edit(_ path: String, blob: String) {
        var n = node(path)!
        n.localPath = blob; n.sha256 = "sha-" + blob; n.pendingOp = .upload; n.contentState = .local
        state.put(n)
        state.append(.upload, nodeId: n.id, payload: OutboxPayload(name: n.name, parentId: n.parentId, remoteId: n.remoteId, blobId: blob,
                                                                   size: 10, sha256: n.sha256), baseVersion: n.version, requestId: "req-edit" + path)
    }

    /// `mv` here (pending).
    mutating func move(_ path: String, to dest: String) {
        var n = node(path)!
        let (parentPath, name) = Self.split(dest)
        let parent = node(parentPath)!
        n.parentId = parent.id; n.name = name; n.pendingOp = n.pendingOp ?? .move
        state.put(n)
        state.append(.move, nodeId: n.id, payload: OutboxPayload(name: name, parentId: parent.id, remoteId: n.remoteId),
                     baseVersion: n.version, requestId: "req-mv" + path)
    }

    /// `rm -r` here of a synced node (pending delete, tombstone).
    mutating func remove(_ path: String) {
        let n = node(path)!
        for d in (try! state.descendants(of: n.id)).reversed() { try! state.remove(d.id) }
        try! state.remove(n.id)
        state.setTombstone(Tombstone(nodeId: n.id, remoteId: n.remoteId, isFolder: n.isFolder, version: n.version))
        state.append(.delete, nodeId: n.id, payload: OutboxPayload(name: n.name, remoteId: n.remoteId), baseVersion: n.version,
                     requestId: "req-rm" + path)
    }

    /// A node as another device left it on the server.
    func remote(_ path: String, id: String? = nil, folder: Bool = false, version: Int64 = 2, recordSeq: Int64 = 1,
                blob: String? = nil, contentSeq: Int64 = 1, device: String = PlanFixture.other, trashed: Bool = false,
                parentId: String? = nil) -> RemoteNode {
        let (parentPath, name) = Self.split(path)
        let rid = id ?? Self.remoteId(path)
        let parent = parentId ?? (parentPath == "/" ? Node.rootId : Self.remoteId(parentPath))
        let record = NodeRecord(device: device, mtime: 5, name: name, parent: parent, seq: recordSeq, isFolder: folder)
        let c = folder ? nil : content(blob ?? "b" + rid, seq: contentSeq, device: device)
        return RemoteNode(id: rid, parentId: parent, name: name, isFolder: folder, version: version, trashed: trashed,
                          record: record, content: c, storedSize: c?.sealedSize ?? 0)
    }

    @discardableResult
    mutating func plan(_ remote: [RemoteNode], mode: PlanMode = .changes, restoring: Set<String> = [],
                       upcoming: [String: RemoteNode] = [:]) throws -> PageOutcome {
        try SyncPlanner(settings: settings).plan(remote, upcoming: upcoming, restoring: restoring, mode: mode, state: &state)
    }

    var ops: [String] { state.outbox.map { "\($0.op.rawValue) \($0.payload.name ?? "-")" } }
}
