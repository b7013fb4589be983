import Foundation
import VaultAPI

/// `/v1/files/{id}/revisions…`: list, details, content, restore.
extension VaultService {
    func listRevisions(_ ctx: RequestContext) throws -> RequestPlan {
        let list = try store.withDB { db -> [Revision] in
            let f = try db.requireFile(owner: ctx.userId, id: ctx.request.param("id"))
            return try db.revisions(owner: ctx.userId, fileId: f.id, headId: f.headRevisionId)
        }
        return Self.respond(RevisionList(revisions: list))
    }

    /// The file and one of its revisions, 404 if either is not this user's.
    func lookupRevision(_ ctx: RequestContext) throws -> (FileResource, Revision) {
        try store.withDB { db in
            let f = try db.requireFile(owner: ctx.userId, id: ctx.request.param("id"))
            guard let r = try db.revision(owner: ctx.userId, fileId: f.id, id: ctx.request.param("rid"),
                                          headId: f.headRevisionId) else {
                throw APIError.notFound("no such revision")
            }
            return (f, r)
        }
    }

    func getRevision(_ ctx: RequestContext) throws -> RequestPlan {
        Self.respond(try lookupRevision(ctx).1)
    }

    func revisionContent(_ ctx: RequestContext) throws -> RequestPlan {
        let (f, r) = try lookupRevision(ctx)
        if let bytes = try liedContent(fileId: f.id, headRevisionId: r.id) {
            return .respond(try contentResponse(ctx.request, bytes: bytes, etag: "\"rev-\(r.id)\""))   // test-only
        }
        return .respond(try contentResponse(ctx.request, revisionId: r.id, size: r.size, sha256: r.sha256,
                                            mimeType: r.mimeType, etag: "\"rev-\(r.id)\""))
    }

    /// Makes a revision's content the new head (a new revision; nothing is overwritten). An
    /// optional JSON body gives the new head's sealed content record (else the old one is copied).
    func restoreRevision(_ ctx: RequestContext) throws -> RequestPlan {
        .buffer(limit: Self.jsonLimit) { [self] body in
            let req = body.isEmpty ? RestoreRequest() : try decode(RestoreRequest.self, body)
            try Self.validateRecord(req.contentMeta, "contentMeta")
            let (f, r) = try lookupRevision(ctx)
            try requireMatchingVersion(f, ctx.request)
            let file = try publish(owner: ctx.userId, deviceId: ctx.deviceId,
                                   content: NewContent(source: .link(revisionId: r.id), size: r.size, sha256: r.sha256,
                                                       mimeType: r.mimeType, contentMeta: req.contentMeta ?? r.contentMeta),
                                   target: .existing(fileId: f.id, baseVersion: f.version), checkQuota: true,
                                   restoredFrom: r.id)
            return .json(file, headers: [Self.etag(file)])
        }
    }
}
