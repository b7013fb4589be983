import Foundation
import VaultCore

/// One node of the tree as `--json` shows it (`ls`, `tree`, `mkdir`, `put`, `mv`).
struct NodeResult: Encodable {
    var path: String
    var name: String
    var type: String
    var size: UInt64
    var modifiedAt: Int64
    var contentState: String
    var pinned: Bool
    var pendingOp: PendingOp?
    var version: Int64
    var mimeType: String?
    var sha256: String?
    /// `tree` only: the folder's children.
    var children: [NodeResult]?

    init(_ n: Node, path: String) {
        self.path = path; name = n.name; type = n.type.rawValue; size = n.size; modifiedAt = n.modifiedAt
        contentState = n.contentState.rawValue; pinned = n.pinned; pendingOp = n.pendingOp; version = n.version
        mimeType = n.mimeType; sha256 = n.sha256
    }

    /// `parent` + `/` + `name` (no doubled slash at the root).
    static func join(_ parent: String, _ name: String) -> String { parent == "/" ? "/" + name : parent + "/" + name }

    /// Said after a file whose local copy is an older version than the server's (STALE).
    static func olderNote(_ n: Node) -> String { n.contentState == .stale ? "  (older version here; the server has a newer one)" : "" }

    /// A short state column: L local, - not downloaded, v downloading, S stale; P pinned; ^ pending upload.
    static func stateMarks(_ n: Node) -> String {
        if n.isFolder { return n.pinned ? " P " : "   " }
        let s: String
        switch n.contentState {
        case .local: s = "L"
        case .notDownloaded: s = "-"
        case .downloading: s = "v"
        case .stale: s = "S"
        }
        return s + (n.pinned ? "P" : " ") + (n.pendingOp != nil ? "^" : " ")
    }
}
