import Foundation
import VaultAPI
#if canImport(Glibc)
import Glibc
#endif

/// Content downloads (`…/content` of a file or a revision) with `Range`, `If-Range` and ETags.
extension VaultService {
    func fileContent(_ ctx: RequestContext) throws -> RequestPlan {
        let f = try store.withDB { db in try db.requireFile(owner: ctx.userId, id: ctx.request.param("id")) }
        guard f.type == .file else { throw APIError.badRequest("a folder has no content", code: "not_a_file") }
        return .respond(try contentResponse(ctx.request, revisionId: f.headRevisionId, size: f.size,
                                            sha256: f.sha256, mimeType: f.mimeType, etag: "\"\(f.version)\""))
    }

    /// The body of one revision, honouring a single `Range` (206/416) and `If-Range`.
    func contentResponse(_ request: HTTPRequest, revisionId: String?, size: Int64, sha256: String?,
                         mimeType: String, etag: String) throws -> HTTPResponse {
        var headers: [(String, String)] = [("ETag", etag), ("Accept-Ranges", "bytes"), ("Content-Type", mimeType)]
        if let sha256 { headers.append(("X-Content-SHA256", sha256)) }
        var range = ByteRanges.parseRange(request.header("range"), size: size)
        if let ifRange = request.header("if-range"), ifRange.trimmingCharacters(in: .whitespaces) != etag {
            range = .whole
        }
        switch range {
        case .unsatisfiable:
            var e = APIError(status: 416, code: "range_not_satisfiable", message: "the range is outside a \(size)-byte file")
            e.headers = [("Content-Range", "bytes */\(size)")]
            throw e
        case .whole:
            guard let rid = revisionId, size > 0 else { return HTTPResponse(status: 200, headers: headers, body: .bytes([])) }
            let file = try POSIXFile(path: content.revisionPath(rid), flags: O_RDONLY)
            return HTTPResponse(status: 200, headers: headers, body: .file(file, offset: 0, length: size))
        case .partial(let start, let end):
            guard let rid = revisionId else { throw APIError.internal("content missing") }
            let file = try POSIXFile(path: content.revisionPath(rid), flags: O_RDONLY)
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(size)"))
            return HTTPResponse(status: 206, headers: headers, body: .file(file, offset: start, length: end - start + 1))
        }
    }
}
