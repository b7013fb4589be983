import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// A failed FUSE operation: the errno the caller gets, and why (for the mount's log; never a
/// name or content, only node ids and the vault's message kind).
struct FuseErrno: Error {
    let code: Int32
    let reason: String?

    init(_ code: Int32, _ reason: String? = nil) { self.code = code; self.reason = reason }

    /// The errno a vault error becomes: a tampered or missing blob and content not on this
    /// device are EIO (never bytes), a locked vault EACCES, a full disk ENOSPC.
    init(_ error: Error, doing what: String) {
        if let e = error as? FuseErrno { self = e; return }
        guard let v = error as? VaultError else { self.init(EIO, "\(what): \(type(of: error))"); return }
        let code: Int32
        switch v.kind {
        case .notFound, .notInitialized: code = ENOENT
        case .alreadyExists: code = EEXIST
        case .invalidName, .usage: code = EINVAL
        case .locked, .wrongPassword: code = EACCES
        case .busy: code = EBUSY
        case .noSpace: code = ENOSPC
        case .policy, .insecure: code = EPERM
        case .conflict: code = EPERM
        case .integrity, .notLocal, .io, .internalError: code = EIO
        }
        self.init(code, "\(what): \(v.kind.rawValue)")
    }
}
