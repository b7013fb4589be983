import Foundation
import VaultAPI

/// `/v1/test/faults`: only with `--test-faults`; otherwise these routes answer 404.
extension VaultService {
    func getFaults(_ ctx: RequestContext) throws -> RequestPlan {
        guard config.testFaults else { throw APIError.notFound("no such route") }
        return Self.respond(faults.current)
    }

    func setFaults(_ ctx: RequestContext) throws -> RequestPlan {
        guard config.testFaults else { throw APIError.notFound("no such route") }
        return .buffer(limit: Self.jsonLimit) { [self] body in
            let settings = try decode(FaultSettings.self, body)
            faults.set(settings)
            if settings.expireSessionsNow == true {
                _ = try store.withDB { db in
                    try db.run("UPDATE uploads SET expires_at = ?", [Date().timeIntervalSince1970 - 1])
                }
                sweepExpiredUploads()
            }
            return .json(faults.current)
        }
    }
}
