import Foundation
import VaultAPI
import VaultSQL
import VaultPrimitives

/// Where new content goes: a new file in a folder, or a new revision of an existing file.
enum UploadTarget {
    /// `id` and `meta`: the client's chosen id and sealed node record (end-to-end encryption).
    case new(name: String, parentId: String, id: String? = nil, meta: String? = nil)
    case existing(fileId: String, baseVersion: Int64?)
}

/// Content ready to publish: a fully written and fsynced file to move in, an existing revision
/// to link (restore), a finished resumable session (`ContentBackend.finish`), or a body already
/// stored as the revision's object while it arrived (`stored`: its temp file `path` goes at commit).
struct NewContent {
    enum Source { case move(path: String), link(revisionId: String), upload(UploadSession), stored(path: String) }
    var source: Source
    var size: Int64
    var sha256: String
    var mimeType: String?
    /// The client's sealed content record of this revision (opaque).
    var contentMeta: String?
    var revisionId: String = Sodium.randomID()
}

/// Publishing content: the one place where a revision becomes visible, atomically with its
/// file row and change entry. The content reaches the store before the transaction
/// (`ContentBackend.prepare`: nothing for the folder, the upload for S3) and its place inside it
/// (`commit`: the folder's rename or link); a crash before commit leaves only unreferenced
/// content that the sweep removes.
extension VaultService {
    /// Checks that `target` can take new content (404, 409, 412), without changing anything.
    func validate(_ db: any SQLConnection, owner: String, target: UploadTarget) throws {
        switch target {
        case .new(let name, let parentId, let id, let meta):
            try Self.validateName(name)
            try Self.validateRecord(meta, "meta")
            if let id {
                try Self.validateClientId(id)
                try db.checkIdFree(owner: owner, id: id)
            }
            _ = try db.requireParentFolder(owner: owner, id: parentId)
            try db.checkNameFree(owner: owner, parentId: parentId, name: name)
        case .existing(let fileId, let base):
            let f = try db.requireFile(owner: owner, id: fileId)
            guard f.type == .file else { throw APIError.badRequest("a folder has no content", code: .notAFile) }
            if let base, base != f.version { throw APIError.stale(f) }
            guard !f.trashed else { throw APIError.conflict("the file is in the trash", code: .fileTrashed) }
            if let p = f.parentId, try db.inTrash(owner: owner, p) {
                throw APIError.conflict("the file's folder is in the trash", code: .parentTrashed)
            }
        }
    }

    /// Publishes `content` to `target` and returns the file. `inTransaction` runs in the same
    /// transaction (used by resumable uploads to close their session).
    func publish(owner: String, deviceId: String?, content: NewContent, target: UploadTarget, checkQuota: Bool,
                 restoredFrom: String? = nil,
                 inTransaction: ((any SQLConnection, FileResource) throws -> Void)? = nil) throws -> FileResource {
        var pruned: [String] = []
        try self.content.prepare(content.source, revisionId: content.revisionId)
        let written: (FileResource, Int64)
        do { written = try store.write(.owner(owner)) { db -> (FileResource, Int64) in
            try validate(db, owner: owner, target: target)
            if checkQuota { try requireQuota(db, owner: owner, adding: content.size) }
            let now = Date()
            var file: FileResource
            var kind: ChangeKind
            switch target {
            case .new(let name, let parentId, let id, let meta):
                file = FileResource(id: id ?? Sodium.randomID(), name: name, parentId: parentId, type: .file,
                                    mimeType: content.mimeType ?? "application/octet-stream", size: content.size,
                                    version: 1, sha256: content.sha256, createdAt: now, modifiedAt: now,
                                    trashed: false, headRevisionId: content.revisionId, meta: meta,
                                    contentMeta: content.contentMeta)
                try db.insertFile(owner: owner, file)
                kind = .created
            case .existing(let fileId, _):
                file = try db.requireFile(owner: owner, id: fileId)
                file.size = content.size; file.sha256 = content.sha256
                file.headRevisionId = content.revisionId
                file.contentMeta = content.contentMeta
                if let m = content.mimeType { file.mimeType = m }
                file.version += 1; file.modifiedAt = now
                try db.updateFile(owner: owner, file)
                kind = restoredFrom == nil ? .updated : .restored
            }
            try db.insertRevision(owner: owner, Revision(
                id: content.revisionId, fileId: file.id, mimeType: file.mimeType, size: content.size,
                sha256: content.sha256, modifiedAt: now, deviceId: deviceId, isHead: true, contentMeta: content.contentMeta))
            try self.content.commit(content.source, revisionId: content.revisionId)
            pruned = try db.pruneRevisions(owner: owner, fileId: file.id, keep: config.revisionsKeep,
                                           headId: content.revisionId)
            try inTransaction?(db, file)
            return (file, try recordChange(db, owner: owner, file: file, kind: kind, deviceId: deviceId))
        } } catch let e as APIError {
            // Refused by a check inside the transaction: it certainly did not commit. (Any other
            // failure may have come after a commit, so the content stays for the sweep to judge.)
            self.content.rollback(content.source, revisionId: content.revisionId)
            throw e
        }
        let (file, cursor) = written
        self.content.remove(revisions: pruned)
        notify(owner: owner, cursor: cursor)
        return file
    }

    /// Runs `body`, turning any thrown error into its JSON answer.
    static func answer(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch let e as APIError { return .error(e) } catch {
            return .error(.unexpected(error))
        }
    }
}
