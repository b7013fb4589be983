import Foundation
import VaultPrimitives
import VaultCrypto
import VaultHTTP
import VaultTestSupport
import XCTest

/// A file or folder as the server lists it.
struct ServerEntry: Equatable, CustomStringConvertible {
    var isFolder: Bool
    var size: Int64
    var sha256: String?
    var description: String { isFolder ? "folder" : "file \(size) B \(sha256?.prefix(12) ?? "-")" }
}

/// Reads the server's live tree through its API (`GET /v1/files?parentId=…`, every page) with an
/// in-process HTTP client (fast enough to check after every sync), and empties it.
final class ServerTree {
    let server: ServerHarness
    private let http: HTTPClient
    private let token: String

    init(_ server: ServerHarness) throws {
        self.server = server
        http = try HTTPClient(configuration: HTTPClientConfiguration(caFile: server.certFile?.path))
        token = try server.token()
    }

    private func get(_ path: String) throws -> [String: Any] {
        let r = try http.send(HTTPRequest(method: .get, url: server.url + path, headers: [("Authorization", "Bearer \(token)")]),
                              collectUpTo: 16 << 20)
        guard r.status == 200, let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any] else {
            throw TransferTestError("GET \(path): HTTP \(r.status)")
        }
        return json
    }

    /// The live children of server folder `id`, decoded through the server harness's decoder
    /// (names, and the plaintext's size and SHA-256).
    func children(_ id: String) throws -> [[String: Any]] {
        var out: [[String: Any]] = []
        var token: String?
        let codec = try server.decoder?.codecIfAny()
        repeat {
            let page = try get("/v1/files?parentId=\(id)&pageSize=1000" + (token.map { "&pageToken=\($0)" } ?? ""))
            for f in page["files"] as? [[String: Any]] ?? [] {
                out.append(try codec.map { try server.decoder!.decode(f, codec: $0) } ?? f)
            }
            token = page["nextPageToken"] as? String
        } while token != nil
        return out
    }

    /// Path → entry for everything reachable from the root.
    func tree() throws -> [String: ServerEntry] {
        var out: [String: ServerEntry] = [:]
        var todo = [("root", "/")]
        while let (id, path) = todo.popLast() {
            for c in try children(id) {
                let p = TreeModel.join(path, c["name"] as? String ?? "?")
                let folder = c["type"] as? String == "folder"
                out[p] = ServerEntry(isFolder: folder, size: (c["size"] as? NSNumber)?.int64Value ?? 0,
                                     sha256: folder ? nil : c["sha256"] as? String)
                if folder { todo.append((c["id"] as? String ?? "", p)) }
            }
        }
        return out
    }

    /// Deletes (trashes) everything under the root.
    func clear() throws {
        for c in try children("root") {
            let id = c["id"] as? String ?? "", v = (c["version"] as? NSNumber)?.intValue ?? 0
            let r = try http.send(HTTPRequest(method: .delete, url: server.url + "/v1/files/\(id)",
                                              headers: [("Authorization", "Bearer \(token)"), ("If-Match", "\"\(v)\"")]))
            guard r.status == 200 else { throw TransferTestError("DELETE \(id): HTTP \(r.status)") }
        }
    }

    /// What the server should hold for `model`.
    static func expected(_ model: TreeModel) -> [String: ServerEntry] {
        model.nodes.mapValues { node in
            switch node {
            case .folder: return ServerEntry(isFolder: true, size: 0, sha256: nil)
            case .file(let c): return ServerEntry(isFolder: false, size: Int64(c.size), sha256: sha256(c.bytes()))
            }
        }
    }

    /// Lines naming every path where `actual` and `expected` differ.
    static func differences(_ actual: [String: ServerEntry], _ expected: [String: ServerEntry]) -> [String] {
        Set(actual.keys).union(expected.keys).sorted().compactMap { p in
            actual[p] == expected[p] ? nil : "\(p): server has \(actual[p]?.description ?? "nothing"), expected \(expected[p]?.description ?? "nothing")"
        }
    }
}

/// Lowercase hex SHA-256.
func sha256(_ bytes: [UInt8]) -> String {
    var h = SHA256Hasher()
    h.update(bytes)
    return Hex.encode(h.finalize())
}
