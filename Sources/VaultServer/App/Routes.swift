/// The server's routes: the single list `docs/openapi.yaml` must match (a test checks both ways).
extension VaultService {
    typealias Handler = (VaultService) -> (RequestContext) throws -> RequestPlan

    static var routeSpecs: [(method: String, path: String, auth: Bool, handler: Handler)] {
        [
            ("GET", "/healthz", false, VaultService.healthz),
            ("GET", "/readyz", false, VaultService.readyz),
            ("POST", "/v1/auth/token", false, VaultService.issueToken),
            ("GET", "/v1/files", true, VaultService.listFiles),
            ("POST", "/v1/files", true, VaultService.createFile),
            ("GET", "/v1/files/{id}", true, VaultService.getFile),
            ("PATCH", "/v1/files/{id}", true, VaultService.updateFile),
            ("DELETE", "/v1/files/{id}", true, VaultService.deleteFile),
            ("GET", "/v1/files/{id}/content", true, VaultService.fileContent),
            ("GET", "/v1/files/{id}/revisions", true, VaultService.listRevisions),
            ("GET", "/v1/files/{id}/revisions/{rid}", true, VaultService.getRevision),
            ("GET", "/v1/files/{id}/revisions/{rid}/content", true, VaultService.revisionContent),
            ("POST", "/v1/files/{id}/revisions/{rid}/restore", true, VaultService.restoreRevision),
            ("POST", "/v1/upload", true, VaultService.startUpload),
            ("GET", "/v1/upload/{id}", true, VaultService.uploadStatus),
            ("DELETE", "/v1/upload/{id}", true, VaultService.abortUpload),
            ("PUT", "/v1/upload/{id}/chunk", true, VaultService.putChunk),
            ("GET", "/v1/keys/envelope", true, VaultService.getEnvelope),
            ("PUT", "/v1/keys/envelope", true, VaultService.putEnvelope),
            ("GET", "/v1/changes/start", true, VaultService.changesStart),
            ("GET", "/v1/changes", true, VaultService.listChanges),
            ("GET", "/v1/events", true, VaultService.events),
            ("GET", "/v1/test/faults", false, VaultService.getFaults),
            ("POST", "/v1/test/faults", false, VaultService.setFaults),
        ]
    }

    /// The router bound to this service.
    func makeRouter() -> Router {
        Router(routes: Self.routeSpecs.map { spec in
            let handler = spec.handler
            return Route(spec.method, spec.path, auth: spec.auth) { [self] ctx in
                try Self.checkDeviceId(ctx.request)
                return try handler(self)(ctx)
            }
        })
    }
}

/// The routes this server serves, as `(method, path pattern)` pairs, for tests and docs.
public enum RouteTable {
    public static var routes: [(method: String, path: String)] {
        VaultService.routeSpecs.map { ($0.method, $0.path) }
    }
}
