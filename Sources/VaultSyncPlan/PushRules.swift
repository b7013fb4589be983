/// What did not replay in this run, for the dependency rules D1–D5 (docs/outbox.md).
public struct PushWaiting: Sendable {
    /// D1: nodes with an entry that waits (their later entries wait too).
    public var nodes = Set<String>()
    /// D3: folders a waiting entry places something in (their delete waits).
    public var placedIn = Set<String>()
    /// D4/D5: whether any entry waits (the server's tree may differ from the outbox's view).
    public var any = false
    /// D4: whether the creation or a move of a node removed locally waits.
    public var placingRemovedNode = false

    public init() {}

    public mutating func add(_ e: OutboxEntry, removed: Bool) {
        nodes.insert(e.nodeId)
        if e.op.placesInParent, let p = e.payload.parentId { placedIn.insert(p) }
        any = true
        if removed && e.op.placesInParent { placingRemovedNode = true }
    }
}

/// One request an outbox entry becomes, in the server's terms (ids are remote ids).
public enum PushRequest: Sendable, Equatable {
    case createFolder(id: String, parent: String, name: String)
    /// A new file with its content (a resumable session keyed by the entry's request id).
    case createFile(id: String, parent: String, name: String, blobId: String)
    case newRevision(fileId: String, baseVersion: Int64, blobId: String)
    case move(fileId: String, baseVersion: Int64, parent: String, name: String)
    /// A delete; a folder's names the feed cursor it was decided on (`decidedAt`, the cursor of
    /// the last pull applied): the server refuses it when anything below the folder changed after.
    case delete(fileId: String, baseVersion: Int64, decidedAt: Int64?)
}

/// The server's answer to a `PushRequest`, decoded (what a 412 or 409 carries is the node as it
/// is now, opened by the codec).
public enum PushAnswer: Sendable, Equatable {
    /// 200/201: the node as it is now.
    case ok(RemoteNode)
    /// 412: the node changed since the base version; as it is now.
    case stale(RemoteNode)
    /// 409 `id_taken`: a node has that id (ours from an earlier attempt, when its record says so).
    case idTaken(RemoteNode?)
    /// 409: the name is taken in that folder.
    case nameTaken
    /// 409/404: the folder to put it in is gone (trashed, or below a trashed folder).
    case parentGone
    /// 404: the node is gone.
    case notFound
    /// 412 `subtree_changed`: a folder delete decided on a cursor after which something below the
    /// folder changed on the server (or a cursor older than the server's history).
    case subtreeChanged
    /// Another 4xx: the entry fails for a reason of its own.
    case refused(String)
}

/// What to do next with an entry.
public enum PushStep: Sendable, Equatable {
    /// Store this id in the entry (`payload.clientId`) before the first request, so a retry
    /// after a lost answer asks for the same node.
    case assignId(String)
    case send(PushRequest)
    /// Applied on the server: record it (and, when known, what the server now holds).
    case done(OutboxCompletion, base: RemoteBase?, message: String?)
    /// Cannot replay now, through no fault of its own (its folder or an earlier entry waits).
    case waits(String)
    case conflict(String)
    case failed(String)
}

/// The push side's decisions, pure: what request an outbox entry becomes, and what an answer
/// means (docs/outbox.md, "Replay"). The simulation runs them as the real replay does.
public struct PushRules {
    /// The node the entry is about (alive, or tombstoned), if any.
    public var target: OutboxTarget?
    /// The server id of a local folder (`root` for the root), nil while it is not on the server.
    public var remoteFolderId: (String?) throws -> String?
    public var waiting: PushWaiting
    /// Folder deletes wait for the pull that checks them (the first push of a sync).
    public var holdFolderDeletes: Bool
    public var deviceId: String
    public var newId: () -> String
    /// D4: whether the server's subtree of a folder still holds a node of the local tree.
    public var subtreeHoldsLocal: (String) throws -> Bool
    /// The entry's node for people.
    public var label: String
    /// The change-feed cursor of the last pull this device applied (nil before the first).
    public var cursor: Int64?

    public init(target: OutboxTarget?, remoteFolderId: @escaping (String?) throws -> String?, waiting: PushWaiting,
                holdFolderDeletes: Bool, deviceId: String, newId: @escaping () -> String,
                subtreeHoldsLocal: @escaping (String) throws -> Bool, label: String, cursor: Int64?) {
        self.target = target; self.remoteFolderId = remoteFolderId; self.waiting = waiting; self.holdFolderDeletes = holdFolderDeletes
        self.deviceId = deviceId; self.newId = newId; self.subtreeHoldsLocal = subtreeHoldsLocal; self.label = label
        self.cursor = cursor
    }

    /// The cursor a delete names (`X-Vault-Decided-At`): a folder's delete names the cursor of the
    /// last pull applied, the one its check was made on (everything up to it is in the local tree,
    /// and the pull dropped the delete if something below the folder changed elsewhere); the
    /// server refuses it (412 `subtree_changed`) when anything below the folder changed after
    /// that. A file has nothing below it: its `If-Match` covers it all.
    public static func decidedAt(isFolder: Bool, lastPull cursor: Int64?) -> Int64? { isFolder ? cursor : nil }

    /// Names compare byte for byte (not by Unicode equivalence): the server keeps them as sent.
    static func same(_ a: String, _ b: String) -> Bool { Array(a.utf8) == Array(b.utf8) }

    /// The first step for entry `e`.
    public func decide(_ e: OutboxEntry) throws -> PushStep {
        let node = target?.node
        switch e.op {
        case .createFolder, .upload:
            if e.op == .upload && node == nil { return .done(.nothing, base: nil, message: nil) }
            if e.op == .createFolder, let t = target, let r = t.remoteId {
                return .done(.onServer(remoteId: r, version: t.version), base: nil, message: nil)
            }
            if e.op == .upload, let file = target?.remoteId ?? e.payload.remoteId {
                guard let blob = e.payload.blobId else { return .failed("the upload entry of \(label) has no content") }
                return .send(.newRevision(fileId: file, baseVersion: target?.version ?? 0, blobId: blob))
            }
            guard let parent = try remoteFolderId(e.payload.parentId ?? node?.parentId) else { return .waits("\(label) waits for its folder") }
            guard let id = e.payload.clientId else { return .assignId(newId()) }
            let name = e.payload.name ?? node?.name ?? ""
            if e.op == .createFolder { return .send(.createFolder(id: id, parent: parent, name: name)) }
            guard let blob = e.payload.blobId else { return .failed("the upload entry of \(label) has no content") }
            return .send(.createFile(id: id, parent: parent, name: name, blobId: blob))
        case .move:
            guard let remote = target?.remoteId ?? e.payload.remoteId else { return .failed("cannot move \(label): it is not on the server") }
            guard let parent = try remoteFolderId(e.payload.parentId) else { return .waits("\(label) waits for its destination folder") }
            return .send(.move(fileId: remote, baseVersion: target?.version ?? e.baseVersion ?? 0, parent: parent,
                               name: e.payload.name ?? node?.name ?? ""))
        case .delete:
            guard let remote = target?.remoteId ?? e.payload.remoteId else { return .done(.nothing, base: nil, message: nil) }
            if waiting.placedIn.contains(e.nodeId) { return .waits("\(label) waits: a change inside it waits") }
            if target?.isFolder == true {
                if holdFolderDeletes { return .waits("\(label) waits for the pull to check what changed in it") }
                if waiting.any && waiting.placingRemovedNode { return .waits("\(label) waits: a change under it waits") }
                if waiting.any, try subtreeHoldsLocal(remote) { return .waits("\(label) waits: it still holds something kept here") }
            }
            return .send(.delete(fileId: remote, baseVersion: target?.version ?? e.baseVersion ?? 0,
                                 decidedAt: Self.decidedAt(isFolder: target?.isFolder ?? false, lastPull: cursor)))
        case .discardUpload:
            // Sessions are the transfer layer's: the replay frees them itself.
            return .done(.nothing, base: nil, message: nil)
        }
    }

    /// What `answer` to `request` (made for entry `e`) means.
    ///
    /// An answer that shows an earlier attempt of this entry applied (its answer lost: the device
    /// or the network died in between) records no newer version than the one the entry was based
    /// on (0 for a node it creates), and no base: what others changed since is the next pull's,
    /// never claimed as seen (a pull skips a version at or below the recorded one). Later entries
    /// of the node that find it changed go to conflict, and replay after that pull.
    public func interpret(_ answer: PushAnswer, to request: PushRequest, for e: OutboxEntry) throws -> PushStep {
        switch (request, answer) {
        case (.createFolder, .ok(let f)), (.move, .ok(let f)):
            let what = if case .createFolder = request { "created folder" } else if e.payload.reseal == true { "resealed" } else { "moved" }
            return .done(.onServer(remoteId: f.id, version: f.version), base: RemoteBase(f), message: "\(what) \(label)")
        case (.createFile(_, _, _, let blob), .ok(let f)), (.newRevision(_, _, let blob), .ok(let f)):
            // The version this upload made: 1 for a new file, one more than its base for a new
            // revision. An upload session an earlier attempt completed answers with the node as it
            // is now (the retry finds the session by its request id): anything later is others'.
            let (based, made): (Int64, Int64) = if case .newRevision(_, let base, _) = request { (base, base + 1) } else { (0, 1) }
            guard f.version == made else {
                return .done(.uploaded(remoteId: f.id, version: based, blobId: blob), base: nil, message: "uploaded \(label)")
            }
            return .done(.uploaded(remoteId: f.id, version: f.version, blobId: blob), base: RemoteBase(f), message: "uploaded \(label)")
        case (.createFolder, .idTaken(let f)), (.createFile, .idTaken(let f)):
            // Sent by an earlier attempt whose answer was lost: the node with that id (128 random
            // bits this device chose, its records sealed by this vault's keys) is ours, wherever
            // others moved it since and whatever they did to it. It records version 0, the version
            // a creation is based on (see above).
            let folder = if case .createFolder = request { true } else { false }
            guard let f, f.isFolder == folder else { return .failed("the server holds another node with the id chosen for \(label)") }
            if case .createFile(_, _, _, let blob) = request {
                return .done(.uploaded(remoteId: f.id, version: 0, blobId: blob), base: nil, message: "uploaded \(label)")
            }
            return .done(.onServer(remoteId: f.id, version: 0), base: nil, message: "created folder \(label)")
        case (.createFolder, .nameTaken), (.createFile, .nameTaken), (.move, .nameTaken):
            if waiting.any { return .waits("\(label) waits: the name is still taken on the server") }
            return .conflict("the name of \(label) is taken on the server")
        case (.newRevision(_, let base, let blob), .stale(let cur)):
            if cur.content?.blob == blob && cur.content?.device == deviceId {
                // An earlier attempt uploaded it; the version stays the one it was based on.
                return .done(.uploaded(remoteId: cur.id, version: base, blobId: blob), base: nil, message: "uploaded \(label)")
            }
            return .conflict("\(label) changed on the server since")
        case (.move(_, let base, let parent, let name), .stale(let cur)):
            // An earlier attempt moved it: the server already agrees. A reseal goes to where the
            // node already is: only this device's record one version on shows it applied.
            let applied = e.payload.reseal == true ? cur.version == base + 1 && cur.record?.device == deviceId : true
            if Self.same(cur.name, name) && cur.parentId == parent && !cur.trashed && applied {
                return .done(.onServer(remoteId: cur.id, version: base), base: nil,
                             message: "\(e.payload.reseal == true ? "resealed" : "moved") \(label)")
            }
            return .conflict("cannot move \(label): it changed on the server since")
        case (.delete, .ok), (.delete, .notFound):
            return .done(.nothing, base: nil, message: "deleted \(label)")
        case (.delete, .subtreeChanged):
            // The next pull brings what changed below it and settles the delete (docs/sync.md:
            // new content or a node created or moved in wins over the folder's delete); a delete
            // that still stands replays after it, on that pull's cursor.
            return .conflict("cannot delete \(label): something in it changed on the server since this device's last pull")
        case (.delete(let id, let base, let decidedAt), .stale(let cur)):
            if cur.trashed { return .done(.nothing, base: nil, message: "deleted \(label)") }
            // The move this delete replaced was applied by an earlier attempt, and nothing else
            // since (one version more, this device's record): delete against that version. Any
            // other version holds changes this device has not seen (new content wins over a
            // delete, docs/sync.md): a conflict, settled by the next pull.
            if e.payload.replacesMove == true, Self.same(cur.name, e.payload.name ?? ""), try cur.parentId == remoteFolderId(e.payload.parentId),
               cur.version == base + 1, cur.record?.device == deviceId {
                return .send(.delete(fileId: id, baseVersion: cur.version, decidedAt: decidedAt))
            }
            return .conflict("cannot delete \(label): it changed on the server since")
        case (_, .stale), (_, .notFound), (_, .parentGone), (_, .subtreeChanged):
            return .conflict("cannot replay the change of \(label): it or its folder changed on the server")
        case (_, .refused(let why)):
            return .failed(why)
        case (_, .idTaken):
            return .conflict("the server refused \(label): its id is taken")
        case (.delete, .nameTaken):
            return .failed("the server answered a delete of \(label) with a name conflict")
        case (.newRevision, .nameTaken):
            return .conflict("the name of \(label) is taken on the server")
        }
    }
}

