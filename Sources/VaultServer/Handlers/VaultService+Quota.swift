import VaultSQL

/// The per-user quota. Sizes come from requests (a session's declared size, a Content-Length),
/// so the check never adds them: `usage + size` could overflow and trap the whole server.
extension VaultService {
    /// Throws 413 `quota_exceeded` unless `owner` may hold `size` more bytes.
    func requireQuota(_ db: any SQLConnection, owner: String, adding size: Int64) throws {
        guard Self.fitsQuota(size, usage: try db.usage(owner: owner), quota: config.quota) else {
            throw APIError.tooLarge("this upload would exceed your storage quota of \(config.quota) bytes",
                                    code: .quotaExceeded)
        }
    }

    /// `usage + size <= quota`, computed without overflow for any values.
    static func fitsQuota(_ size: Int64, usage: Int64, quota: Int64) -> Bool {
        size >= 0 && usage >= 0 && size <= quota && usage <= quota - size
    }
}
