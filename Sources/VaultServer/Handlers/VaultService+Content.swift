import Foundation
import VaultAPI
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Content downloads (`…/content` of a file or a revision) with `Range`, `If-Range` and ETags.
extension VaultService {
    func fileContent(_ ctx: RequestContext) throws -> RequestPlan {
        let f = try store.withDB { db in try db.requireFile(owner: ctx.userId, id: ctx.request.param("id")) }
        guard f.type == .file else { throw APIError.badRequest("a folder has no content", code: .notAFile) }
        if let bytes = try liedContent(fileId: f.id, headRevisionId: f.headRevisionId) {
            return .respond(try contentResponse(ctx.request, bytes: bytes, etag: "\"\(f.version)\""))   // test-only
        }
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
            var e = APIError(status: 416, code: .rangeNotSatisfiable, message: "the range is outside a \(size)-byte file")
            e.headers = [("Content-Range", "bytes */\(size)")]
            throw e
        case .whole:
            let rid = size > 0 ? revisionId : nil
            return HTTPResponse(status: 200, headers: headers, body: try faultedBody(rid, size: size, offset: 0, length: rid == nil ? 0 : size))
        case .partial(let start, let end):
            guard let rid = revisionId else { throw APIError.internal("content missing") }
            let extra = Int64(max(faults.current.extraContentBytes ?? 0, 0))   // test-only lie: a bigger file
            headers.append(("Content-Range", "bytes \(start)-\(end.addingSaturating(extra))/\(size.addingSaturating(extra))"))
            return HTTPResponse(status: 206, headers: headers, body: try faultedBody(rid, size: size, offset: start, length: end - start + 1))
        }
    }

    /// `length` bytes of revision `rid` from `offset`, as the test-only content faults shape
    /// them (`extraContentBytes`, `contentWithoutLength`); unchanged when they are off.
    private func faultedBody(_ rid: String?, size: Int64, offset: Int64, length: Int64) throws -> ResponseBody {
        let f = faults.current
        let extra = Int64(max(f.extraContentBytes ?? 0, 0)), pieceDelay = max(f.contentPieceDelayMs ?? 0, 0)
        guard extra > 0 || f.contentWithoutLength == true || pieceDelay > 0 else {
            guard let rid, length > 0 else { return .bytes([]) }
            return try content.body(revision: rid, size: size, offset: offset, length: length)
        }
        let reader = try rid.map { try content.open(revision: $0, size: size) }
        if pieceDelay > 0 { AccessLog.message("test fault: a slow content body started at \(offset) (\(length) bytes)") }
        return .stream(FaultedContentBody(file: reader, offset: offset, length: reader == nil ? 0 : length, extra: extra,
                                          announced: f.contentWithoutLength != true, pieceDelayMs: pieceDelay))
    }
}

/// A content body under the test-only faults: the file's bytes, then `extra` random bytes;
/// with or without `Content-Length`. When the connection is done it logs how many of the extra
/// bytes were handed to the connection, so tests can see a client stop reading.
final class FaultedContentBody: StreamingBody, @unchecked Sendable {
    // SAFETY: read only from the connection's own thread, one call at a time.
    private let file: RevisionReader?
    private var offset: Int64
    private var fileLeft: Int64
    private let extra: Int64
    private var extraSent: Int64 = 0
    private let announced: Bool
    private let total: Int64
    private let pieceDelayMs: Int

    init(file: RevisionReader?, offset: Int64, length: Int64, extra: Int64, announced: Bool, pieceDelayMs: Int = 0) {
        self.file = file; self.offset = offset; self.fileLeft = length; self.extra = extra
        self.announced = announced; self.total = length.addingSaturating(extra); self.pieceDelayMs = pieceDelayMs
    }

    var length: Int64? { announced ? total : nil }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard buffer.count > 0 else { return 0 }
        if fileLeft > 0, let file {
            var piece = Int(min(Int64(buffer.count), fileLeft))
            if pieceDelayMs > 0 {   // a slow link (test fault): a small piece at a time, each late
                piece = min(piece, 64 << 10)
                usleep(useconds_t(pieceDelayMs) * 1000)
            }
            let room = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<piece])
            guard let n = try? file.read(into: room, at: offset), n > 0 else { return nil }
            offset += Int64(n); fileLeft -= Int64(n)
            return n
        }
        guard extraSent < extra else { return nil }
        let n = Int(min(Int64(buffer.count), extra - extraSent))
        let random = Sodium.randomBytes(n)
        random.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
        extraSent += Int64(n)
        return n
    }

    func close() {
        guard extra > 0 else { return }
        AccessLog.message("test fault: a content body ended after \(extraSent) of \(extra) extra bytes")
    }
}
