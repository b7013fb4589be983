/// The JSON body of every error answer: `{"error":{"code":"not_found","message":"…"}}`.
public struct APIErrorBody: Codable, Sendable {
    /// A stable machine-readable code and a sentence for people.
    public struct Detail: Codable, Sendable {
        public var code: APIErrorCode
        public var message: String
        public init(code: APIErrorCode, message: String) { self.code = code; self.message = message }
    }
    public var error: Detail
    public init(code: APIErrorCode, message: String) { error = Detail(code: code, message: message) }
}
