// What a sync pass did, as plain values: the results of `vault sync` (push and pull) and of the
// agent's background passes, which the `vault-agent` process reads and passes on without linking
// the sync code (VaultSync) that produces them.

/// What one `vault sync` push did.
public struct PushSummary: Sendable, Codable {
    /// Outbox entries replayed and removed.
    public var done = 0
    /// Entries in conflict (the server has a newer version, or holds the name; nothing was overwritten).
    public var conflicts = 0
    /// Entries that failed for a reason of their own (kept, with the reason; retried next sync).
    public var failed = 0
    /// Entries waiting behind another one (a conflict, a failure, a hold, their folder).
    public var skipped = 0
    /// Large uploads held back on a metered network.
    public var waitingForUnmetered = 0
    /// Entries paused or cancelled by the user (`vault transfers resume` puts them back).
    public var held = 0
    /// Pinned files downloaded after the push.
    public var downloaded = 0
    /// One line per event, for people.
    public var messages: [String] = []

    public init() {}
}

/// What a pull did, for people and `--json`.
public struct PullSummary: Sendable, Codable {
    /// Remote nodes applied.
    public var applied = 0
    /// Local nodes removed because the server removed them.
    public var removed = 0
    /// Whether the full listing was used (first pull, or an expired cursor).
    public var listed = false
    /// What the pull said about changes made on both sides (also kept for `vault conflicts`).
    public var conflicts: [SyncMessage] = []
    /// The quarantine after the pull: server nodes refused because they do not authenticate
    /// (this pull's and earlier ones' not cleared since). Not empty: `vault sync` exits 6.
    public var refused: [RefusedNode] = []
    public init() {}

    enum CodingKeys: String, CodingKey { case applied, removed, listed, conflicts, refused }

    /// Decodes a summary; one from an agent of the version before the quarantine has no `refused`.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        applied = try c.decode(Int.self, forKey: .applied)
        removed = try c.decode(Int.self, forKey: .removed)
        listed = try c.decode(Bool.self, forKey: .listed)
        conflicts = try c.decode([SyncMessage].self, forKey: .conflicts)
        refused = try c.decodeIfPresent([RefusedNode].self, forKey: .refused) ?? []
    }
}
