import Foundation
import VaultAPI

/// `POST /v1/upload?uploadType=media|multipart|resumable`: one-request uploads stream into a
/// temp file and publish when the body ends; `resumable` opens a session.
extension VaultService {
    func startUpload(_ ctx: RequestContext) throws -> RequestPlan {
        switch ctx.request.query["uploadType"] ?? "" {
        case "media": return try simpleUpload(ctx)
        case "multipart": return try multipartUpload(ctx)
        case "resumable": return try createUploadSession(ctx)
        default: throw APIError.badRequest("uploadType must be media, multipart or resumable")
        }
    }

    /// Refuses a body that is too large or over quota before reading it.
    func checkBodyAllowed(_ ctx: RequestContext) throws {
        if let len = ctx.request.contentLength {
            guard len <= config.maxBody else {
                throw APIError.tooLarge("the body is larger than the \(config.maxBody)-byte limit; use a resumable upload")
            }
            try store.withDB { db in try requireQuota(db, owner: ctx.userId, adding: len) }
        }
    }

    func simpleUpload(_ ctx: RequestContext) throws -> RequestPlan {
        let q = ctx.request.query
        if let name = q["name"] { try Self.validateName(name) }   // checked even when fileId makes it unused
        let mime = try Self.mediaType(fromHeader: ctx.request.header("content-type"))
        let target: UploadTarget
        if let fileId = q["fileId"] {
            target = .existing(fileId: fileId, baseVersion: try requireIfMatch(ctx.request))
        } else {
            target = .new(name: q["name"] ?? "", parentId: q["parentId"] ?? "root")
        }
        let expectedSHA = try q["sha256"].flatMap { $0.isEmpty ? nil : try Self.sha256Hex($0) }
        try store.withDB { db in try validate(db, owner: ctx.userId, target: target) }
        try checkBodyAllowed(ctx)
        let writer = try ContentWriter(store: content, limit: config.maxBody, expectedLength: ctx.request.contentLength)
        let sink = ContentUploadSink(writer: writer) { [self] size, sha, _ in
            if let expected = expectedSHA, expected != sha {
                throw APIError(status: 422, code: .checksumMismatch,
                               message: "the content's SHA-256 is \(sha), not \(expected); nothing was stored")
            }
            let file = try publish(owner: ctx.userId, deviceId: ctx.deviceId,
                                   content: writer.content(size: size, sha256: sha, mimeType: mime),
                                   target: target, checkQuota: true)
            return .json(file, status: 201, headers: [Self.etag(file)])
        }
        return .stream(sink)
    }
}

/// Writes a body straight to a temp file, then runs `complete` with its size, hash and path.
final class ContentUploadSink: BodySink {
    let writer: ContentWriter
    let complete: (Int64, String, String) throws -> HTTPResponse

    init(writer: ContentWriter, complete: @escaping (Int64, String, String) throws -> HTTPResponse) {
        self.writer = writer; self.complete = complete
    }

    func receive(_ bytes: UnsafeRawBufferPointer) throws { try writer.append(bytes) }

    func finish() -> HTTPResponse {
        let response = VaultService.answer {
            let (size, sha) = try writer.seal()
            return try complete(size, sha, writer.path)
        }
        writer.discard()   // a no-op once published (the temp was renamed away)
        return response
    }

    func abort() { writer.discard() }
}
