/// The context a route handler gets: the request and the authenticated user.
struct RequestContext {
    var request: HTTPRequest
    /// Set for authenticated routes.
    var userId: String
    /// `X-Device-Id`, if sent (its form is checked before any handler runs: `checkDeviceId`).
    var deviceId: String? { request.header("x-device-id") }
}

/// One route: method, path pattern with `{name}` segments, whether it needs a bearer token.
struct Route {
    let method: String
    let pattern: String
    let requiresAuth: Bool
    let handler: (RequestContext) throws -> RequestPlan
    let segments: [String]

    init(_ method: String, _ pattern: String, auth: Bool = true,
         _ handler: @escaping (RequestContext) throws -> RequestPlan) {
        self.method = method; self.pattern = pattern; self.requiresAuth = auth; self.handler = handler
        segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// The path parameters if the decoded `pathSegments` match this pattern.
    func match(_ pathSegments: [String]) -> [String: String]? {
        guard pathSegments.count == segments.count else { return nil }
        var params: [String: String] = [:]
        for (pat, seg) in zip(segments, pathSegments) {
            if pat.hasPrefix("{") && pat.hasSuffix("}") {
                guard !seg.isEmpty else { return nil }
                params[String(pat.dropFirst().dropLast())] = seg
            } else if pat != seg {
                return nil
            }
        }
        return params
    }
}

/// The outcome of looking up a method and path.
enum RouteMatch {
    case found(Route, [String: String])
    case methodNotAllowed(allowed: [String])
    case notFound
}

/// A fixed table of routes.
struct Router {
    let routes: [Route]

    /// Looks up decoded path segments (`HTTPRequest.segments`).
    func match(method: String, segments: [String]) -> RouteMatch {
        var allowed: [String] = []
        for r in routes {
            if let params = r.match(segments) {
                if r.method == method { return .found(r, params) }
                allowed.append(r.method)
            }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}

extension Router {
    /// Looks up a raw path (decoded here; a path that does not decode matches nothing).
    func match(method: String, path: String) -> RouteMatch {
        guard let segments = try? RequestDecoding.segments(path) else { return .notFound }
        return match(method: method, segments: segments)
    }
}
