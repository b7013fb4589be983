import Foundation
import VaultCore

/// One row of the browser: a file or folder with what it holds and where it stands.
public struct BrowseEntry: Equatable, Sendable {
    /// What is happening to the entry's content between this device and the server.
    public enum Activity: Equatable, Sendable {
        case none
        /// A local change waits for the next sync (for a folder: something inside does).
        case awaitingUpload
        /// The upload was paused or cancelled (`vault transfers resume` sends it).
        case paused
        case uploading(percent: Int)
        case downloading(percent: Int)
        /// A conflict: a change the server refused (it has a newer version; nothing was
        /// overwritten), one a sync settled that `vault conflicts` still lists (a folder:
        /// something inside), or a conflict copy (`name (conflict from DEVICE DATE).ext`).
        case conflict
    }

    public var id: String
    public var name: String
    public var isFolder: Bool
    /// A file's size, or the sum of every file below a folder.
    public var size: UInt64
    public var modifiedAt: Int64
    /// A file's content state (nil for a folder).
    public var content: ContentState?
    public var pinned: Bool
    public var activity: Activity

    public init(id: String, name: String, isFolder: Bool, size: UInt64, modifiedAt: Int64,
                content: ContentState?, pinned: Bool, activity: Activity = .none) {
        self.id = id; self.name = name; self.isFolder = isFolder; self.size = size
        self.modifiedAt = modifiedAt; self.content = content; self.pinned = pinned; self.activity = activity
    }

    /// The entry for `node`: `totals` for a folder (what is below it), its outbox state, its
    /// unfinished transfer, if any (direction, running, bytes done and total), and whether an
    /// open conflict (`vault conflicts`) names it or, for a folder, something below it.
    public init(node: Node, totals: FolderTotals? = nil, outbox: OutboxMark? = nil,
                transfer: (upload: Bool, running: Bool, done: Int64, total: Int64)? = nil, conflicted: Bool = false) {
        self.init(id: node.id, name: node.name, isFolder: node.isFolder,
                  size: node.isFolder ? totals?.bytes ?? 0 : node.size, modifiedAt: node.modifiedAt,
                  content: node.isFolder ? nil : node.contentState, pinned: node.pinned)
        func percent(_ t: (upload: Bool, running: Bool, done: Int64, total: Int64)) -> Int {
            t.total > 0 ? Int(min(100, max(0, t.done * 100 / t.total))) : 0
        }
        if outbox == .conflict {
            activity = .conflict
        } else if let t = transfer, t.running {
            activity = t.upload ? .uploading(percent: percent(t)) : .downloading(percent: percent(t))
        } else if node.contentState == .downloading && !node.isFolder {
            activity = .downloading(percent: transfer.map(percent) ?? 0)
        } else if conflicted || ConflictName.isCopy(node.name) {
            activity = .conflict
        } else if outbox == .paused {
            activity = .paused
        } else if node.pendingOp != nil || outbox == .pending || (totals?.awaitingUpload ?? 0) > 0 {
            activity = .awaitingUpload
        }
    }

    /// The seven-cell state column: content (`L` local, `-` not downloaded, `S` an older version
    /// (STALE: the server has a newer one), `v` downloading), `P` pinned, sync (`^` awaiting
    /// upload, `=` paused, `!` conflict), and a transfer's percentage. See `BrowseHelp.marks`.
    public var marks: String {
        var content = " "
        switch self.content {
        case .local?: content = "L"
        case .notDownloaded?: content = "-"
        case .stale?: content = "S"
        case .downloading?: content = "v"
        case nil: content = " "
        }
        var sync = " ", progress = ""
        switch activity {
        case .none: break
        case .awaitingUpload: sync = "^"
        case .paused: sync = "="
        case .conflict: sync = "!"
        case .uploading(let p): sync = "^"; progress = "\(p)%"
        case .downloading(let p): content = "v"; progress = "\(p)%"
        }
        let pad = String(repeating: " ", count: max(0, 4 - progress.count))
        return content + (pinned ? "P" : " ") + sync + pad + progress
    }

    /// The name as shown: escaped (`DisplayText`, as every command shows names), a folder with a trailing `/`.
    public var displayName: String { DisplayText.escaped(name) + (isFolder ? "/" : "") }

    /// The size as shown (`1.5 MiB`).
    public var sizeText: String { ByteCount.format(size) }
}
