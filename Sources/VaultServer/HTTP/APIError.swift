import VaultAPI
import VaultPrimitives
import VaultSQL
#if canImport(Glibc)
import Glibc
#endif

/// An error answer: HTTP status, a stable code, a sentence, and optional headers or a custom
/// JSON body (a 412 carries the current file instead of the error object).
struct APIError: Error, CustomStringConvertible {
    let status: Int
    let code: APIErrorCode
    let message: String
    var headers: [(String, String)] = []
    var body: [UInt8]? = nil

    var description: String { "\(status) \(code): \(message)" }

    static func badRequest(_ message: String, code: APIErrorCode = .badRequest) -> APIError {
        APIError(status: 400, code: code, message: message)
    }
    static func unauthorized(_ message: String = "a valid bearer token is required") -> APIError {
        APIError(status: 401, code: .unauthorized, message: message,
                 headers: [("WWW-Authenticate", "Bearer")])
    }
    static func notFound(_ message: String = "no such file") -> APIError {
        APIError(status: 404, code: .notFound, message: message)
    }
    static func conflict(_ message: String, code: APIErrorCode = .conflict) -> APIError {
        APIError(status: 409, code: code, message: message)
    }
    static let preconditionRequired = APIError(status: 428, code: .preconditionRequired,
                                               message: "this change needs If-Match: <version>")
    static func tooLarge(_ message: String, code: APIErrorCode = .tooLarge) -> APIError {
        APIError(status: 413, code: code, message: message)
    }
    static func tooMany(_ message: String, retryAfter: Int) -> APIError {
        APIError(status: 429, code: .tooManyRequests, message: message,
                 headers: [("Retry-After", String(retryAfter))])
    }
    static func `internal`(_ message: String) -> APIError {
        APIError(status: 500, code: .internal, message: message)
    }

    /// A 500 for an unexpected error: the detail (paths, SQL) goes to the server log, the client
    /// gets a generic sentence.
    static func unexpected(_ error: Error) -> APIError {
        if let e = error as? APIError { return e }
        if let e = error as? SQLError, e.kind == .constraint, e.message.contains(MetadataStore.ownerGone) {
            return .unauthorized("the bearer token is invalid, expired or revoked")   // removed mid-request
        }
        if let e = error as? FileSystemError, e.errno == .fileTooLarge {
            return APIError(status: 413, code: .tooLarge, message: "the file is larger than this server's storage can hold")
        }
        if let e = error as? S3Error, case .unavailable = e {
            AccessLog.message("object store: \(e)")
            return APIError(status: 503, code: .contentStoreUnavailable,
                            message: "the server's object store is not answering; nothing was changed, try again later",
                            headers: [("Retry-After", "5")])
        }
        AccessLog.message("internal error: \(error)")
        if let e = error as? FileSystemError, e.errno.isNoSpace {
            return APIError(status: 507, code: .insufficientStorage, message: "the server is out of disk space; try again later")
        }
        return APIError(status: 500, code: .internal, message: "internal server error")
    }

    /// 412 with the current file as the body.
    static func stale(_ current: FileResource) -> APIError {
        var e = APIError(status: 412, code: .versionMismatch,
                         message: "the file changed; current version is \(current.version)")
        e.body = (try? APIJSON.encoder().encode(current)).map { [UInt8]($0) }
        e.headers = [("ETag", "\"\(current.version)\"")]
        return e
    }
}
