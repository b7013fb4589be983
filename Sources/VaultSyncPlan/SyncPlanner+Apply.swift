/// Remote nodes that are alive on the server: created, renamed or moved, new content, and the
/// cases where this device changed the same node (docs/sync.md, "Applying a remote change" and
/// "Conflicts").
extension PlanRun {
    /// What the server says about a node differs from this device's own last word on it.
    struct Changes {
        /// Renamed or moved (or created) by another device since this device last saw it.
        var placement: Bool
        /// New content from another device since this device last saw it.
        var content: Bool
    }

    func changes(_ r: RemoteNode) throws -> Changes {
        let b = try state.base(remoteId: r.id)
        let placement = r.record.map { $0.device != settings.deviceId && (b == nil || $0.seq > b!.recordSeq) } ?? false
        let content = r.content.map { $0.device != settings.deviceId && (b == nil || $0.seq > b!.contentSeq) } ?? false
        return Changes(placement: placement, content: content)
    }

    func detachIfMoving(_ r: RemoteNode) throws {
        guard var l = try state.node(remoteId: r.id), r.version > l.version, l.id != Node.rootId,
              !state.entries(of: l.id).contains(where: { $0.op == .move }) else { return }
        let parentRemote = try l.parentId.flatMap { $0 == Node.rootId ? Node.rootId : try state.node(id: $0)?.remoteId }
        guard parentRemote != r.parentId || l.name != r.name else { return }
        detached[l.id] = (l.parentId, l.name)
        l.parentId = nil
        state.put(l)
    }

    func apply(_ r: RemoteNode, parent p: String) throws {
        if let l = try state.node(remoteId: r.id) { return try update(l, r, parent: p) }
        if let t = state.tombstone(remoteId: r.id) { return try deletedHere(t, r, parent: p) }
        if var own = try ownCreation(remoteId: r.id) {
            // This device made it and did not record the answer: adopt it.
            own.remoteId = r.id
            own.version = r.version
            state.put(own)
            state.setBase(RemoteBase(r))
            return
        }
        let removedHere = try deletedAncestor(startingAt: try state.base(remoteId: r.id)?.parentId ?? Node.rootId, asLastSeen: true) != nil
            && !(try changes(r).content)
        if removedHere && restoring.contains(r.id) {
            // Something in it changed on another device: it comes back with its subtree.
            try create(r, parent: p)
            if let n = try state.node(remoteId: r.id) { sayBack(r.id, path: try state.path(of: n)) }
            return
        }
        if removedHere {
            // Removed here with a folder, moved out of it on the server: the delete wins.
            let id = try state.node(id: r.id) == nil ? r.id : settings.newId()
            state.setTombstone(Tombstone(nodeId: id, remoteId: r.id, isFolder: r.isFolder, version: r.version))
            state.append(.delete, nodeId: id, payload: OutboxPayload(name: r.name, remoteId: r.id), baseVersion: r.version,
                         requestId: settings.newId())
            state.setBase(RemoteBase(r))
            return
        }
        try create(r, parent: p)
    }

    /// A node this device does not have: it appears metadata first.
    func create(_ r: RemoteNode, parent p: String) throws {
        let parent = try state.node(id: p)
        let id = try state.node(id: r.id) == nil && state.tombstones[r.id] == nil ? r.id : settings.newId()
        var n = Node(id: id, remoteId: r.id, parentId: p, name: r.name, type: r.isFolder ? .folder : .file,
                     size: UInt64(max(0, r.content?.size ?? 0)), version: r.version,
                     modifiedAt: r.content?.mtime ?? r.record?.mtime ?? 0, mimeType: r.isFolder ? nil : r.content?.mime,
                     contentState: r.isFolder ? .local : .notDownloaded, localPath: nil, pinned: parent?.pinned ?? false,
                     lastAccessed: nil, pendingOp: nil, localVersion: 0, sha256: r.content?.sha256)
        try place(&n, parent: p, name: r.name, remote: r)
        state.setBase(RemoteBase(r))
        // A folder that existed before (moved out of the trash, or back from it) comes back with
        // what it holds, which the feed does not repeat: its subtree is listed.
        if mode == .changes && r.isFolder && r.version > 1 && !restoring.contains(r.id) && !outcome.needSubtrees.contains(r.id) {
            outcome.needSubtrees.append(r.id)
        }
    }

    /// A node both sides may have changed. `parent` nil keeps its placement (it is being moved
    /// out of a folder trashed on the server).
    func update(_ l: Node, _ r: RemoteNode, parent p: String?) throws {
        defer { state.setBase(RemoteBase(r)) }
        guard r.version > l.version || detached[l.id] != nil else { return }   // an echo or a duplicate
        var x = l
        let entries = state.entries(of: x.id)
        let moves = entries.filter { $0.op == .move }, uploads = entries.filter { $0.op == .upload }
        let changed = try changes(r)

        if let p {
            let differs = x.parentId != p || x.name != r.name
            if moves.isEmpty {
                if differs { try place(&x, parent: p, name: r.name, remote: r) }
            } else if changed.placement && differs {
                try say(.moveMove, x, "renamed or moved here and on \(writer(of: r, content: false)): this device's placement is kept")
            }
        }

        if !x.isFolder, let c = r.content {
            if uploads.isEmpty {
                if x.sha256 != c.sha256 || x.size != UInt64(max(0, c.size)) {
                    x.size = UInt64(max(0, c.size)); x.sha256 = c.sha256; x.mimeType = c.mime; x.modifiedAt = c.mtime
                    switch x.contentState {
                    case .local, .stale: x.contentState = x.localPath == c.blob ? .local : .stale
                    case .downloading: x.contentState = .notDownloaded
                    case .notDownloaded: break
                    }
                } else if x.contentState == .stale && x.localPath == c.blob {
                    x.contentState = .local
                }
            } else if changed.content {
                x.version = r.version
                state.put(x)
                return try editVersusEdit(x, r, c, uploads: uploads)
            }
        }
        // A new node record of a file whose content did not change carries its time (a time set on
        // another device: `touch -d` through its mount is a move to where the file is).
        if !x.isFolder, changed.placement, !changed.content, moves.isEmpty, uploads.isEmpty, let t = r.record?.mtime {
            x.modifiedAt = t
        }
        x.version = r.version
        state.put(x)
        resolveConflicts(of: x.id)
    }

    /// Entries of `nodeId` that the first push found in conflict are settled by the plan: they
    /// replay again against the version now recorded.
    func resolveConflicts(of nodeId: String) {
        for var e in state.entries(of: nodeId) where e.state == .conflict {
            e.state = .pending; e.lastError = nil; e.sentAt = nil
            state.update(e)
        }
    }

    /// How a message names the device that wrote `r`'s node record (`content`: its content
    /// record): the name it sealed there, else "another device".
    func writer(of r: RemoteNode, content: Bool) -> String {
        let name = content ? r.content?.deviceName : r.record?.deviceName
        return name.flatMap { DeviceName.isValid($0) ? $0 : nil } ?? "another device"
    }

    /// Edit versus edit, by the conflict policy.
    func editVersusEdit(_ l: Node, _ r: RemoteNode, _ c: ContentRecord, uploads: [OutboxEntry]) throws {
        var x = l
        switch settings.conflictPolicy {
        case .lastWriterWins:
            // This device's upload is rebased on the server's version (a new session) and becomes
            // the head; the server's version stays a revision.
            for var e in uploads {
                e.requestId = settings.newId(); e.baseVersion = r.version
                state.update(e)
            }
            state.put(x)
            resolveConflicts(of: x.id)
            try say(.editEdit, x, "changed here and on \(writer(of: r, content: true)): this device's version becomes the current one; the other stays a revision")
        case .keepBoth:
            // The server's version keeps the name; this device's content becomes a new file.
            let copyName = try conflictName(x.name, in: x.parentId ?? Node.rootId)
            let copy = Node(id: settings.newId(), remoteId: nil, parentId: x.parentId, name: copyName, type: .file, size: x.size,
                            version: 0, modifiedAt: x.modifiedAt, mimeType: x.mimeType, contentState: .local,
                            localPath: x.localPath, pinned: x.pinned, lastAccessed: x.lastAccessed, pendingOp: .upload,
                            localVersion: 1, sha256: x.sha256)
            state.put(copy)
            for var e in uploads {
                if let blob = e.payload.blobId { state.giveBlob(blob, to: copy.id) }
                e.nodeId = copy.id
                e.payload.name = copyName; e.payload.parentId = copy.parentId; e.payload.remoteId = nil; e.payload.clientId = nil
                e.requestId = settings.newId(); e.baseVersion = nil; e.state = .pending; e.lastError = nil; e.sentAt = nil
                state.update(e)
            }
            if let blob = x.localPath { state.giveBlob(blob, to: copy.id) }
            x.localPath = nil
            x.contentState = .notDownloaded
            x.size = UInt64(max(0, c.size)); x.sha256 = c.sha256; x.mimeType = c.mime; x.modifiedAt = c.mtime
            x.pendingOp = state.entries(of: x.id).isEmpty ? nil : x.pendingOp
            state.put(x)
            resolveConflicts(of: x.id)
            try say(.editEdit, copy, "\(x.name) changed here and on \(writer(of: r, content: true)): the other version keeps the name, this device's is kept as \(copyName)")
        }
    }
}
