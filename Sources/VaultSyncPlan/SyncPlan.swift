/// How an edit made on this device and one made elsewhere to the same file are settled.
public enum ConflictPolicy: String, Sendable, Codable, CaseIterable {
    /// The server's version keeps the name; this device's becomes a conflict copy beside it.
    case keepBoth = "keep-both"
    /// This device's version becomes the head; the server's stays a revision.
    case lastWriterWins = "last-writer-wins"
}

/// What the planner is told from outside: it reads no clock, makes no random choice and knows
/// no device by itself.
public struct SyncSettings {
    /// This device's id, as its records carry it: a record of this device is its own change
    /// coming back, never a change made elsewhere.
    public var deviceId: String
    /// The device's name, in conflict copies' names.
    public var deviceName: String
    /// The date for conflict copies' names (`YYYY-MM-DD`).
    public var today: String
    public var conflictPolicy: ConflictPolicy
    /// Makes a new local id or request id.
    public var newId: () -> String

    public init(deviceId: String, deviceName: String, today: String, conflictPolicy: ConflictPolicy = .keepBoth,
                newId: @escaping () -> String) {
        self.deviceId = deviceId; self.deviceName = deviceName; self.today = today
        self.conflictPolicy = conflictPolicy; self.newId = newId
    }
}

/// How the remote nodes of a page were obtained.
public enum PlanMode: Sendable {
    /// From the change feed: a node whose parent is unknown waits for it.
    case changes
    /// From the full listing: a node whose parent is unknown is placed under the folder that
    /// will have its parent's remote id as local id (checked when the listing ends).
    case listing
}

/// A line the sync says about a case that both sides changed (its output, its `--json`, and
/// `vault conflicts` until the user clears it).
public struct SyncMessage: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case editEdit = "edit-vs-edit"
        case editDelete = "edit-vs-delete"
        case deleteEdit = "delete-vs-edit"
        case moveMove = "move-vs-move"
        case moveDelete = "move-vs-delete"
        case folderRecreated = "folder-recreated"
        case nameCollision = "name-collision"
        case duplicateName = "duplicate-name"
    }

    public var kind: Kind
    /// The path it is about (where it is now on this device).
    public var path: String
    public var text: String

    public init(kind: Kind, path: String, text: String) { self.kind = kind; self.path = path; self.text = text }
}

/// What planning one page gave besides the state change.
public struct PageOutcome: Sendable {
    public var messages: [SyncMessage] = []
    /// Remote nodes whose parent this device does not know yet (carried to the next page).
    public var deferred: [RemoteNode] = []
    /// Local nodes removed because the server removed them (for the delete guard).
    public var removed = 0
    /// Remote folders whose live subtree the puller must list and plan again with this page:
    /// a local delete of them is dropped because something in them changed on the server.
    public var needSubtrees: [String] = []

    public init() {}
}

/// A server whose data contradicts what this device saw or what a tree can be.
public struct SyncPlanError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
