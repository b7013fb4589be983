import Foundation
import VaultCore

/// What `vault sync` is asked to do.
public struct SyncOptions: Sendable {
    /// Chunks of one upload in flight (1…16).
    public var concurrency = SyncClient.defaultConcurrency
    /// Uploads and downloads of at least this many bytes wait (a metered network).
    public var holdLargeFrom: UInt64?
    /// The most local nodes a pull may remove without `force`.
    public var maxDelete = 1000
    public var force = false
    public var conflictPolicy = ConflictPolicy.keepBoth

    public init() {}
}

/// What `vault sync` did.
public struct SyncReport: Sendable, Codable {
    public var push = PushSummary()
    public var pull = PullSummary()
    public var downloaded = 0
    /// Large transfers waiting for an unmetered network.
    public var waitingForUnmetered = 0
    public init() {}
}

extension SyncClient {
    /// `vault sync` (docs/sync.md): pushes the outbox (folder deletes wait for the pull to check
    /// them), pulls what changed on the server and settles what both sides changed, pushes what
    /// that produced, then downloads pinned content that is missing or older than the server's.
    public func sync(_ o: SyncOptions) throws -> SyncReport {
        var r = SyncReport()
        let first = try push(concurrency: o.concurrency, holdLargeFrom: o.holdLargeFrom, holdFolderDeletes: true)
        r.pull = try pull(policy: o.conflictPolicy, maxDelete: o.maxDelete, force: o.force)
        let second = try push(concurrency: o.concurrency, holdLargeFrom: o.holdLargeFrom)
        r.push = second
        r.push.done += first.done
        r.push.messages = first.messages + second.messages
        let pinned = try downloadPinned(holdLargeFrom: o.holdLargeFrom)
        r.downloaded = pinned.downloaded
        r.push.downloaded = pinned.downloaded
        r.waitingForUnmetered = second.waitingForUnmetered + pinned.waiting
        return r
    }
}
