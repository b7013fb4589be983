import Foundation

extension APIUser {
    /// Starts a resumable session; returns the answer.
    func startSession(name: String, bytes: [UInt8], requestId: String = UUID().uuidString, parent: String = "root",
                      sha: String? = nil, fileId: String? = nil, baseVersion: Int? = nil) throws -> TestResponse {
        var body: [String: Any] = ["name": name, "parentId": parent, "size": bytes.count,
                                   "sha256": sha ?? sha256Hex(bytes), "requestId": requestId,
                                   "mimeType": "application/octet-stream"]
        if let fileId { body["fileId"] = fileId; body.removeValue(forKey: "name"); body.removeValue(forKey: "parentId") }
        if let baseVersion { body["baseVersion"] = baseVersion }
        return try json("POST", "/v1/upload?uploadType=resumable", body)
    }

    /// PUTs bytes `start..<end` of `bytes` as one chunk.
    func putChunk(_ uploadId: String, _ bytes: [UInt8], _ start: Int, _ end: Int) throws -> TestResponse {
        try send("PUT", "/v1/upload/\(uploadId)/chunk",
                 headers: ["Content-Range": "bytes \(start)-\(end - 1)/\(bytes.count)"], body: Array(bytes[start..<end]))
    }

    /// Uploads all chunks (in `order`, default ascending); returns the last answer.
    func putAll(_ uploadId: String, _ bytes: [UInt8], chunkSize: Int, order: [Int]? = nil) throws -> TestResponse {
        let n = max(1, (bytes.count + chunkSize - 1) / chunkSize)
        var last: TestResponse?
        for i in order ?? Array(0..<n) {
            last = try putChunk(uploadId, bytes, i * chunkSize, min(bytes.count, (i + 1) * chunkSize))
        }
        return last!
    }
}
