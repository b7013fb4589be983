import Foundation
import VaultAPI

/// `POST /v1/auth/token`: username + password → a bearer JWT. Failed passwords are throttled
/// per user name and per client IP (`LoginThrottle`): 429 with `Retry-After`, no check made.
extension VaultService {
    func issueToken(_ ctx: RequestContext) throws -> RequestPlan {
        let ip = ctx.request.clientAddress
        return .buffer(limit: 64 * 1024) { [self] body in
            let req = try decode(TokenRequest.self, body)
            if let wait = try logins.admit(user: req.username, ip: ip) {
                throw APIError.tooMany("too many failed logins; try again in \(wait) s", retryAfter: wait)
            }
            guard let signIn = try users.check(name: req.username, password: Array(req.password.utf8)) else {
                throw APIError.unauthorized("wrong username or password")
            }
            try logins.succeeded(user: req.username, ip: ip)
            let (token, exp) = signer.issue(userId: signIn.userId, generation: signIn.generation, ttl: config.sessionTTL)
            return .json(TokenResponse(token: token, expiresAt: exp, userId: signIn.userId))
        }
    }
}
