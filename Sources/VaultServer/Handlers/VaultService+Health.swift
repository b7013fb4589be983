import Foundation
import VaultAPI
import VaultPrimitives

/// `GET /healthz` and `GET /readyz`, unauthenticated, for a load balancer or an orchestrator.
extension VaultService {
    /// The process is up and answering: always 200 `{"status":"alive"}` (it touches no store).
    func healthz(_ ctx: RequestContext) throws -> RequestPlan {
        Self.respond(["status": "alive", "instance": config.instanceId])
    }

    /// 200 `{"status":"ready"}` when this instance can serve requests: the metadata store answers
    /// and is at this server's schema version, and a file can be written and synced in the
    /// content store. Otherwise 503 `not_ready` naming what is wrong (a balancer takes the
    /// instance out of rotation until it answers 200 again).
    func readyz(_ ctx: RequestContext) throws -> RequestPlan {
        var problems: [String] = []
        do {
            let (found, wanted) = try store.schemaVersions()
            if found != wanted {
                problems.append("the metadata store is at schema version \(found), this server needs \(wanted): run `vault-server migrate`")
            }
        } catch {
            problems.append("the metadata store \(store.location) does not answer: \(Self.reason(error))")
        }
        do { try content.checkWritable() } catch {
            problems.append("the content store cannot be written: \(Self.reason(error))")
        }
        guard problems.isEmpty else {
            throw APIError(status: 503, code: .notReady, message: problems.joined(separator: "; "), headers: [("Retry-After", "5")])
        }
        return Self.respond(["status": "ready", "instance": config.instanceId])
    }

    /// A store error in one line without paths of the data folder or a connection password.
    private static func reason(_ error: Error) -> String {
        if let e = error as? FileSystemError { return "\(e.operation) failed (\(e.errno))" }
        return String(describing: error).split(separator: "\n").first.map(String.init) ?? "unknown error"
    }
}
