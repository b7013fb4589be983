/// The JSON body of every error answer: `{"error":{"code":"not_found","message":"…"}}`.
public struct APIErrorBody: Codable, Sendable {
    /// A stable machine-readable code and a sentence for people.
    public struct Detail: Codable, Sendable {
        public var code: String
        public var message: String
        public init(code: String, message: String) { self.code = code; self.message = message }
    }
    public var error: Detail
    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}
