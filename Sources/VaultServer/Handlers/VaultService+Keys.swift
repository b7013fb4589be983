import Foundation
import VaultAPI
import VaultSQL

/// `/v1/keys/envelope`: each account's key envelope (the client's MAC'd keyslot file), opaque to
/// the server, replaced only with `If-Match` so two devices changing it at once never lose a slot.
extension VaultService {
    /// Envelopes are at most this long (a keyslot file with a few dozen slots and a key history).
    static let maxEnvelopeBytes = 64 << 10

    /// The envelope; `If-None-Match: "<version>"` naming the current version answers 304 with no
    /// body (a device checks it at every sync, cheaply).
    func getEnvelope(_ ctx: RequestContext) throws -> RequestPlan {
        var unless: Int64?
        if let tag = ctx.request.header("if-none-match") {
            guard let v = Self.parseETag(tag.trimmingCharacters(in: .whitespaces)) else {
                throw APIError.badRequest("If-None-Match must be an envelope version such as \"3\"", code: .invalidPrecondition)
            }
            unless = v
        }
        guard let e = try store.withDB({ db in try db.envelope(owner: ctx.userId) }) else {
            throw APIError(status: 404, code: .noEnvelope, message: "this account has no key envelope yet")
        }
        let etag = "\"\(e.version)\""
        if let lie = faults.current.lie, lie.kind == .envelope, let body = lie.envelope {
            return Self.respond(KeyEnvelope(envelope: body, version: e.version), headers: [("ETag", etag)])   // test-only
        }
        if unless == e.version { return .respond(HTTPResponse(status: 304, headers: [("ETag", etag)], body: .bytes([]))) }
        return Self.respond(e, headers: [("ETag", etag)])
    }

    /// Creates the envelope (`If-None-Match: *`) or replaces the version named by `If-Match`;
    /// 412 with the current envelope when another device changed it first.
    func putEnvelope(_ ctx: RequestContext) throws -> RequestPlan {
        .buffer(limit: Self.maxEnvelopeBytes + 1024) { [self] body in
            let req = try decode(PutKeyEnvelope.self, body)
            guard !req.envelope.isEmpty, req.envelope.utf8.count <= Self.maxEnvelopeBytes,
                  req.envelope.utf8.allSatisfy({ $0 == 10 || (32...126).contains($0) }) else {
                throw APIError.badRequest("envelope must be 1–\(Self.maxEnvelopeBytes) bytes of printable ASCII", code: .invalidEnvelope)
            }
            let noneMatch = ctx.request.header("if-none-match")?.trimmingCharacters(in: .whitespaces)
            guard noneMatch == nil || noneMatch == "*" else {
                throw APIError.badRequest("If-None-Match takes only \"*\" here (create the envelope)", code: .invalidPrecondition)
            }
            let create = noneMatch == "*"
            let ifMatch: Int64? = ctx.request.header("if-match") != nil ? try requireIfMatch(ctx.request) : nil
            guard create || ifMatch != nil else { throw APIError.preconditionRequired }
            let (saved, created) = try store.write(.owner(ctx.userId)) { db -> (KeyEnvelope, Bool) in
                let current = try db.envelope(owner: ctx.userId)
                if let current, create || current.version != ifMatch {
                    var e = APIError(status: 412, code: .envelopeChanged,
                                     message: create ? "the account has a key envelope already (version \(current.version))"
                                                     : "the key envelope changed; current version is \(current.version)")
                    e.body = (try? APIJSON.encoder().encode(current)).map { [UInt8]($0) }
                    e.headers = [("ETag", "\"\(current.version)\"")]
                    throw e
                }
                if current == nil, ifMatch != nil {
                    throw APIError(status: 404, code: .noEnvelope, message: "this account has no key envelope yet (create it with If-None-Match: *)")
                }
                let next = KeyEnvelope(envelope: req.envelope, version: (current?.version ?? 0) + 1)
                try db.saveEnvelope(owner: ctx.userId, next)
                return (next, current == nil)
            }
            return .json(saved, status: created ? 201 : 200, headers: [("ETag", "\"\(saved.version)\"")])
        }
    }
}
