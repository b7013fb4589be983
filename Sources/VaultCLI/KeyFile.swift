import Foundation
import VaultCore
import VaultPrimitives

/// Key files of the organisation's tools: hex (or raw bytes) of a known length.
enum KeyFile {
    /// The key in `path`: its hex (surrounding white space ignored), or exactly `n` raw bytes.
    static func read(_ path: String, bytes n: Int, what: String) throws -> [UInt8] {
        let data = try SourceFile(path, accepting: [.regular, .pipe], what: "the key file").readAll(limit: 4096)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let decoded = Hex.decode(text), decoded.count == n { return decoded }
        if data.count == n { return data }
        throw VaultError(.usage, "\(path) does not hold a \(what) (\(n) bytes, hex)")
    }

    /// Writes `bytes` as hex and a newline to a new file `name` in `folder` (mode 0600); an
    /// existing file is never overwritten.
    static func write(_ bytes: [UInt8], named name: String, in folder: String) throws -> String {
        let path = (folder as NSString).appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: path) { throw VaultError(.alreadyExists, "\(path) exists; refusing to overwrite a key") }
        guard FileManager.default.createFile(atPath: path, contents: Data(Hex.encode(bytes).utf8 + [10]), attributes: [.posixPermissions: 0o600]) else {
            throw VaultError(.io, "cannot write \(path)")
        }
        return path
    }
}
