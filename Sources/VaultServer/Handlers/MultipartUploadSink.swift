import Foundation
import VaultAPI

/// Streams a two-part `multipart/related` (or `form-data`) body: a JSON metadata part, then the
/// content part, written straight to a temp file. Only the metadata and a delimiter-sized tail
/// are ever held in memory.
final class MultipartUploadSink: BodySink {
    private let delimiter: [UInt8]          // "\r\n--" + boundary
    private var head: [UInt8] = []
    private var pending: [UInt8] = []
    private var writer: ContentWriter?
    private var done = false
    /// The bytes right after the content part's delimiter: `--` closes the body; anything else
    /// would be a third part, which is refused rather than silently dropped.
    private var afterContent: [UInt8] = []
    private var failure: APIError?
    private let makeWriter: () throws -> ContentWriter
    private let complete: (MultipartMetadata, String?, ContentWriter) throws -> HTTPResponse
    private var metadata: MultipartMetadata?
    private var partMime: String?
    static let headLimit = 64 * 1024

    init(boundary: String, makeWriter: @escaping () throws -> ContentWriter,
         complete: @escaping (MultipartMetadata, String?, ContentWriter) throws -> HTTPResponse) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        self.makeWriter = makeWriter; self.complete = complete
    }

    /// The boundary parameter of a multipart Content-Type, if any.
    static func boundary(fromContentType ct: String?) -> String? {
        guard let ct, ct.lowercased().hasPrefix("multipart/") else { return nil }
        for param in ct.split(separator: ";").dropFirst() {
            let kv = param.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if kv.count == 2, kv[0].lowercased() == "boundary" {
                let b = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return b.isEmpty || b.utf8.count > 70 ? nil : b
            }
        }
        return nil
    }

    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        if done { return try checkClosing(Array(bytes)) }
        if writer == nil {
            head.append(contentsOf: bytes)
            try parseHead()
            return
        }
        try feed(Array(bytes))
    }

    private func parseHead() throws {
        let open = Array(delimiter.dropFirst(2))          // "--boundary" at the very start
        guard let first = Self.find(open, in: head, from: 0) else { return try checkHeadSize() }
        let crlf2 = Array("\r\n\r\n".utf8)
        guard let h1 = Self.find(crlf2, in: head, from: first + open.count) else { return try checkHeadSize() }
        guard let m1 = Self.find(delimiter, in: head, from: h1 + 4) else { return try checkHeadSize() }
        guard let h2 = Self.find(crlf2, in: head, from: m1 + delimiter.count) else { return try checkHeadSize() }
        let metaBytes = Array(head[(h1 + 4)..<m1])
        let meta = try VaultService.decodeBody(MultipartMetadata.self, metaBytes, what: "the first multipart part (the metadata)")
        if let m = meta.mimeType { try VaultService.validateMediaType(m) }
        try VaultService.validateName(meta.name)
        try VaultService.validateBaseVersion(meta.baseVersion)
        try VaultService.validateIds(meta.parentId, meta.fileId)
        metadata = meta
        let headers = String(decoding: head[(m1 + delimiter.count)..<h2], as: UTF8.self)
        for line in headers.split(separator: "\r\n") where line.lowercased().hasPrefix("content-type:") {
            partMime = try VaultService.mediaType(fromHeader: String(line.dropFirst("content-type:".count)))
        }
        writer = try makeWriter()
        let rest = Array(head[(h2 + 4)...])
        head = []
        try feed(rest)
    }

    private func checkHeadSize() throws {
        if head.count > Self.headLimit {
            throw APIError.badRequest("multipart metadata part too large or malformed", code: .invalidMultipart)
        }
    }

    private func feed(_ bytes: [UInt8]) throws {
        guard let writer else { return }
        pending.append(contentsOf: bytes)
        if let idx = Self.find(delimiter, in: pending, from: 0) {
            try pending.withUnsafeBytes { try writer.append(UnsafeRawBufferPointer(rebasing: $0[0..<idx])) }
            let rest = Array(pending[(idx + delimiter.count)...])
            pending = []; done = true
            return try checkClosing(rest)
        }
        let keep = delimiter.count - 1
        if pending.count > keep {
            let cut = pending.count - keep
            try pending.withUnsafeBytes { try writer.append(UnsafeRawBufferPointer(rebasing: $0[0..<cut])) }
            pending.removeFirst(cut)
        }
    }

    private func checkClosing(_ bytes: [UInt8]) throws {
        guard afterContent.count < 2 else { return }
        afterContent += bytes.prefix(2 - afterContent.count)
        if afterContent.count == 2 && afterContent != Array("--".utf8) {
            throw APIError.badRequest("a multipart upload has exactly two parts: the JSON metadata, then the content",
                                      code: .invalidMultipart)
        }
    }

    func finish() -> HTTPResponse {
        let response = VaultService.answer {
            guard done, afterContent.count == 2, let metadata, let writer else {
                throw APIError.badRequest("the multipart body ended before its closing boundary", code: .invalidMultipart)
            }
            return try complete(metadata, partMime, writer)
        }
        writer?.discard()
        return response
    }

    func abort() { writer?.discard() }

    /// First index of `needle` in `hay` at or after `from`.
    static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        let n = needle.count
        guard n > 0, hay.count - from >= n else { return nil }
        return hay.withUnsafeBufferPointer { h in
            needle.withUnsafeBufferPointer { nd in
                var i = from
                let last = h.count - n
                while i <= last {
                    if h[i] == nd[0] && memcmp(h.baseAddress! + i, nd.baseAddress!, n) == 0 { return i }
                    i += 1
                }
                return nil
            }
        }
    }
}

extension VaultService {
    func multipartUpload(_ ctx: RequestContext) throws -> RequestPlan {
        guard let boundary = MultipartMetadataBoundary.of(ctx.request) else {
            throw APIError.badRequest("uploadType=multipart needs Content-Type: multipart/related; boundary=…",
                                      code: .invalidMultipart)
        }
        try checkBodyAllowed(ctx)
        let sink = MultipartUploadSink(boundary: boundary, makeWriter: { [self] in
            try ContentWriter(store: content, limit: config.maxBody)
        }) { [self] meta, mime, writer in
            try Self.validateRecord(meta.contentMeta, "contentMeta")
            try Self.validateRecord(meta.meta, "meta")
            if let id = meta.id { try Self.validateClientId(id) }
            let target: UploadTarget = meta.fileId.map { .existing(fileId: $0, baseVersion: meta.baseVersion) }
                ?? .new(name: meta.name, parentId: meta.parentId ?? "root", id: meta.id, meta: meta.meta)
            let (size, sha) = try writer.seal()
            let file = try publish(owner: ctx.userId, deviceId: ctx.deviceId,
                                   content: NewContent(source: .move(path: writer.path), size: size, sha256: sha,
                                                       mimeType: meta.mimeType ?? mime, contentMeta: meta.contentMeta),
                                   target: target, checkQuota: true)
            return .json(file, status: 201, headers: [Self.etag(file)])
        }
        return .stream(sink)
    }
}

enum MultipartMetadataBoundary {
    static func of(_ r: HTTPRequest) -> String? { MultipartUploadSink.boundary(fromContentType: r.header("content-type")) }
}
