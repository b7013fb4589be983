import Foundation
import VaultAPI
#if canImport(Glibc)
import Glibc
#endif

/// The test-only lies of a malicious server (`FaultSettings.lie`, only with `--test-faults`):
/// the end-to-end tests set one and check that the device catches it (docs/server.md).
extension VaultService {
    private var lie: FaultLie? { config.testFaults ? faults.current.lie : nil }

    /// `f` as the `listing` lie describes it (unchanged when no lie is about it).
    func lied(_ f: FileResource) -> FileResource {
        guard let lie, lie.kind == .listing, lie.fileId == f.id else { return f }
        var out = f
        if let rid = lie.fromRevisionId, let r = try? store.withDB({ db in try db.anyOwnersRevisionContent(id: rid) }) {
            out.size = r.size ?? out.size
            out.sha256 = r.sha256
            out.contentMeta = r.contentMeta
            out.headRevisionId = rid
        }
        if let size = lie.size { out.size = size }
        if let type = lie.type { out.type = type }
        return out
    }

    /// `list` with the `listing` lie applied to each file.
    func lied(_ list: FileList) -> FileList {
        guard lie != nil else { return list }
        return FileList(files: list.files.map(lied), nextPageToken: list.nextPageToken)
    }

    /// The bytes a lie serves as the content of file `fileId` whose head is `headRevisionId`, or
    /// nil when no lie is about its content.
    func liedContent(fileId: String, headRevisionId: String?) throws -> [UInt8]? {
        guard let lie, lie.fileId == fileId else { return nil }
        func read(_ rid: String) throws -> [UInt8] {
            guard let r = try store.withDB({ db in try db.anyOwnersRevisionContent(id: rid) }), let size = r.size else {
                throw APIError.internal("lie: no content \(rid)")
            }
            return try content.open(revision: rid, size: size).readAll(size: size)
        }
        switch lie.kind {
        case .splice:
            guard let head = headRevisionId else { return nil }
            let stored = try read(head)
            var out: [UInt8] = []
            for r in lie.ranges ?? [] where r.count == 2 {
                let a = Int(max(0, min(r[0], Int64(stored.count)))), b = Int(max(Int64(a), min(r[1], Int64(stored.count))))
                out += stored[a..<b]
            }
            return out
        case .contentFrom:
            if let rid = lie.fromRevisionId { return try read(rid) }
            guard let other = lie.fromFileId,
                  let head = try store.withDB({ db in try db.anyOwnersHeadRevisionId(fileId: other) })
            else { return nil }
            return try read(head)
        case .listing:
            return try lie.fromRevisionId.map(read)
        case .envelope:
            return nil
        }
    }

    /// A content answer from bytes in memory, honouring one `Range` like `contentResponse`.
    func contentResponse(_ request: HTTPRequest, bytes: [UInt8], etag: String) throws -> HTTPResponse {
        let size = Int64(bytes.count)
        var headers: [(String, String)] = [("ETag", etag), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream")]
        switch ByteRanges.parseRange(request.header("range"), size: size) {
        case .unsatisfiable:
            var e = APIError(status: 416, code: .rangeNotSatisfiable, message: "the range is outside a \(size)-byte file")
            e.headers = [("Content-Range", "bytes */\(size)")]
            throw e
        case .whole:
            return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))
        case .partial(let start, let end):
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(size)"))
            return HTTPResponse(status: 206, headers: headers, body: .bytes(Array(bytes[Int(start)...Int(end)])))
        }
    }
}
