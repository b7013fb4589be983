/// What a sync pass is asked to do: the options of `vault sync`, as the command line takes them
/// and as they travel to the agent (its socket's `sync` request and its worker's arguments).
public struct SyncRequest: Codable, Sendable, Equatable {
    /// Large transfers go now even on a metered network (unless the policy forbids it).
    public var allowMetered = false
    /// Chunks of one upload in flight (1…16); nil: the default.
    public var concurrency: Int?
    /// Only download pinned content (no push, no pull).
    public var pinnedOnly = false
    /// The pull's delete guard (`--max-delete`); nil: the default.
    public var maxDelete: Int?
    /// Apply a pull past the delete guard.
    public var force = false

    public init(allowMetered: Bool = false, concurrency: Int? = nil, pinnedOnly: Bool = false, maxDelete: Int? = nil, force: Bool = false) {
        self.allowMetered = allowMetered; self.concurrency = concurrency; self.pinnedOnly = pinnedOnly
        self.maxDelete = maxDelete; self.force = force
    }
}
