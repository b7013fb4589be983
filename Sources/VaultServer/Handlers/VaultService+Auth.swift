import Foundation
import VaultAPI

/// `POST /v1/auth/token`: username + password → a bearer JWT.
extension VaultService {
    func issueToken(_ ctx: RequestContext) throws -> RequestPlan {
        .buffer(limit: 64 * 1024) { [self] body in
            let req = try decode(TokenRequest.self, body)
            guard let uid = try users.check(name: req.username, password: Array(req.password.utf8)) else {
                throw APIError.unauthorized("wrong username or password")
            }
            let (token, exp) = signer.issue(userId: uid, ttl: config.sessionTTL)
            return .json(TokenResponse(token: token, expiresAt: exp, userId: uid))
        }
    }
}
