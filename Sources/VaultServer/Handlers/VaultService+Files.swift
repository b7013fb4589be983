import Foundation
import VaultAPI
import VaultSQL
import VaultPrimitives

/// `/v1/files` and `/v1/files/{id}`: list, create, get, rename/move, delete to trash.
extension VaultService {
    func listFiles(_ ctx: RequestContext) throws -> RequestPlan {
        let q = ctx.request.query
        if let scope = q["scope"] {
            guard scope == "all" else { throw APIError.badRequest("scope must be 'all'", code: .invalidScope) }
            return try listAllFiles(ctx)
        }
        let parentId = q["parentId"] ?? "root"
        let pageSize = q["pageSize"].map { Digits.parse($0, max: 5000).map(Int.init) ?? 0 } ?? 100
        guard pageSize >= 1 else { throw APIError.badRequest("pageSize must be 1…5000") }
        var after: (String, String)?
        if let token = q["pageToken"], !token.isEmpty {
            guard let bytes = Base64URL.decode(Substring(token)),
                  let pair = try? JSONDecoder().decode([String].self, from: Data(bytes)), pair.count == 2 else {
                throw APIError.badRequest("pageToken is not one this server issued", code: .invalidPageToken)
            }
            after = (pair[0], pair[1])
        }
        let (files, more) = try store.withDB { db -> ([FileResource], Bool) in
            let parent = try db.requireFile(owner: ctx.userId, id: parentId)
            guard parent.type == .folder else { throw APIError.badRequest("\(parentId) is not a folder", code: .notAFolder) }
            let rows = try db.children(owner: ctx.userId, parentId: parentId, after: after, limit: pageSize + 1)
            return (Array(rows.prefix(pageSize)), rows.count > pageSize)
        }
        var next: String?
        if more, let last = files.last, let data = try? JSONEncoder().encode([last.name, last.id]) {
            next = Base64URL.encode([UInt8](data))
        }
        return Self.respond(lied(FileList(files: files, nextPageToken: next)))
    }

    /// `scope=all`: every live node of the account except the root, in id order, paged by id —
    /// the flat listing a new device starts from (its cursor comes from `/v1/changes/start` first).
    func listAllFiles(_ ctx: RequestContext) throws -> RequestPlan {
        let q = ctx.request.query
        let pageSize = q["pageSize"].map { Digits.parse($0, max: 5000).map(Int.init) ?? 0 } ?? 1000
        guard (1...5000).contains(pageSize) else { throw APIError.badRequest("pageSize must be 1…5000") }
        var after = ""
        if let token = q["pageToken"], !token.isEmpty {
            guard let bytes = Base64URL.decode(Substring(token)), let id = String(bytes: bytes, encoding: .utf8),
                  !id.isEmpty, id.utf8.count <= 64 else {
                throw APIError.badRequest("pageToken is not one this server issued", code: .invalidPageToken)
            }
            after = id
        }
        // Nodes below a trashed folder are trashed with it: left out (a page may then hold fewer
        // than pageSize; the token goes on from the last node looked at).
        let (scanned, files) = try store.withDB { db -> ([FileResource], [FileResource]) in
            let rows = try db.untrashedFiles(owner: ctx.userId, after: after, limit: pageSize + 1)
            let page = Array(rows.prefix(pageSize))
            let cursor = try db.latestCursor(owner: ctx.userId)
            var live = liveness.known(owner: ctx.userId, cursor: cursor)
            live["root"] = true
            func isLive(_ folder: String) throws -> Bool {
                if let known = live[folder] { return known }
                let v = try !db.inTrash(owner: ctx.userId, folder)
                live[folder] = v
                return v
            }
            let shown = try page.filter { try isLive($0.parentId ?? "root") }
            liveness.remember(owner: ctx.userId, cursor: cursor, live)
            return (rows, shown)
        }
        let next = scanned.count > pageSize ? scanned[pageSize - 1].id : nil
        return Self.respond(lied(FileList(files: files, nextPageToken: next.map { Base64URL.encode(Array($0.utf8)) })))
    }

    func createFile(_ ctx: RequestContext) throws -> RequestPlan {
        .buffer(limit: Self.jsonLimit) { [self] body in
            let req = try decode(CreateFileRequest.self, body)
            try Self.validateName(req.name)
            try Self.validateIds(req.parentId)
            if let m = req.mimeType { try Self.validateMediaType(m) }
            try Self.validateRecord(req.meta, "meta")
            if let id = req.id { try Self.validateClientId(id) }
            let type = req.type ?? .file
            let now = Date()
            var file = FileResource(
                id: req.id ?? Sodium.randomID(), name: req.name, parentId: req.parentId ?? "root", type: type,
                mimeType: req.mimeType ?? (type == .folder ? Self.folderMime : "application/octet-stream"),
                size: 0, version: 1, sha256: type == .folder ? nil : Self.emptySHA256,
                createdAt: now, modifiedAt: now, trashed: false, headRevisionId: nil, meta: req.meta)
            let cursor = try store.write(.owner(ctx.userId)) { db -> Int64 in
                if req.id != nil { try db.checkIdFree(owner: ctx.userId, id: file.id) }
                _ = try db.requireParentFolder(owner: ctx.userId, id: file.parentId!)
                try db.checkNameFree(owner: ctx.userId, parentId: file.parentId!, name: file.name)
                try db.insertFile(owner: ctx.userId, file)
                file = try db.requireFile(owner: ctx.userId, id: file.id)
                return try recordChange(db, owner: ctx.userId, file: file, kind: .created, deviceId: ctx.deviceId)
            }
            notify(owner: ctx.userId, cursor: cursor)
            return .json(file, status: 201, headers: [Self.etag(file)])
        }
    }

    func getFile(_ ctx: RequestContext) throws -> RequestPlan {
        let file = lied(try store.withDB { db in try db.requireFile(owner: ctx.userId, id: ctx.request.param("id")) })
        return Self.respond(file, headers: [Self.etag(file)])
    }

    func updateFile(_ ctx: RequestContext) throws -> RequestPlan {
        .buffer(limit: Self.jsonLimit) { [self] body in
            let req = try decode(UpdateFileRequest.self, body)
            try Self.validateRecord(req.meta, "meta")
            // The body's own rules first: a malformed body is a 400 whatever the version.
            if let name = req.name { try Self.validateName(name) }
            try Self.validateIds(req.parentId)
            if let m = req.mimeType { try Self.validateMediaType(m) }
            let id = ctx.request.param("id")
            let decidedAt = try Self.decidedAt(ctx.request)
            let (file, cursor) = try store.write(.owner(ctx.userId)) { db -> (FileResource, Int64?) in
                var f = try db.requireFile(owner: ctx.userId, id: id)
                try requireMatchingVersion(f, ctx.request)
                guard id != "root" || (req.name == nil && req.parentId == nil && req.trashed == nil) else {
                    throw APIError.badRequest("the root folder cannot be renamed, moved or trashed", code: .rootImmutable)
                }
                var kind: ChangeKind = .updated
                let wasTrashed = f.trashed
                // Below a trashed folder nothing changes (only the trashed node itself comes back).
                if let p = f.parentId, try db.inTrash(owner: ctx.userId, p), !(wasTrashed && req.trashed == false) {
                    throw APIError.conflict("the file's folder is in the trash", code: .parentTrashed)
                }
                if let name = req.name, name != f.name { f.name = name; kind = .moved }
                if let parent = req.parentId, parent != f.parentId {
                    _ = try db.requireParentFolder(owner: ctx.userId, id: parent)
                    if f.type == .folder, try db.isAncestor(owner: ctx.userId, id, of: parent) {
                        throw APIError.badRequest("a folder cannot move into itself or its own subfolder", code: .cycle)
                    }
                    f.parentId = parent; kind = .moved
                }
                if let mime = req.mimeType { f.mimeType = mime }
                if let meta = req.meta { f.meta = meta }
                if let trashed = req.trashed, trashed != f.trashed {
                    if trashed { try checkSubtreeUnchanged(db, owner: ctx.userId, f, decidedAt: decidedAt) }
                    f.trashed = trashed
                    kind = trashed ? .deleted : .restored
                }
                if !f.trashed {
                    if wasTrashed { _ = try db.requireParentFolder(owner: ctx.userId, id: f.parentId ?? "root") }
                    try db.checkNameFree(owner: ctx.userId, parentId: f.parentId ?? "root", name: f.name, excluding: f.id)
                }
                f.version += 1
                f.modifiedAt = Date()
                try db.updateFile(owner: ctx.userId, f)
                let c = try recordChange(db, owner: ctx.userId, file: f, kind: kind, deviceId: ctx.deviceId)
                return (f, c)
            }
            if let cursor { notify(owner: ctx.userId, cursor: cursor) }
            return .json(file, headers: [Self.etag(file)])
        }
    }

    func deleteFile(_ ctx: RequestContext) throws -> RequestPlan {
        let id = ctx.request.param("id")
        let decidedAt = try Self.decidedAt(ctx.request)
        let (file, cursor) = try store.write(.owner(ctx.userId)) { db -> (FileResource, Int64?) in
            var f = try db.requireFile(owner: ctx.userId, id: id)
            try requireMatchingVersion(f, ctx.request)
            guard id != "root" else { throw APIError.badRequest("the root folder cannot be deleted", code: .rootImmutable) }
            if f.trashed { return (f, nil) }
            try checkSubtreeUnchanged(db, owner: ctx.userId, f, decidedAt: decidedAt)
            f.trashed = true
            f.version += 1
            f.modifiedAt = Date()
            try db.updateFile(owner: ctx.userId, f)
            return (f, try recordChange(db, owner: ctx.userId, file: f, kind: .deleted, deviceId: ctx.deviceId))
        }
        if let cursor { notify(owner: ctx.userId, cursor: cursor) }
        return Self.respond(file, headers: [Self.etag(file)])
    }
}
