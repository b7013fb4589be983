import Foundation

/// Body of `POST /v1/auth/token`.
public struct TokenRequest: Codable, Sendable {
    public var username: String
    public var password: String
    public init(username: String, password: String) { self.username = username; self.password = password }
}

/// A bearer token (JWT, HS256) and its expiry.
public struct TokenResponse: Codable, Sendable {
    public var token: String
    public var expiresAt: Date
    public var userId: String
    public init(token: String, expiresAt: Date, userId: String) {
        self.token = token; self.expiresAt = expiresAt; self.userId = userId
    }
}
