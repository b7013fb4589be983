import Foundation
import VaultCrypto
import VaultSQL

/// The outbox: local changes waiting for the server, in order (docs/outbox.md). The tree
/// operations record them (`enqueue`, and the compaction rules in `Vault+OutboxCompaction`); the
/// sync layer reads them, records what the server answered, and holds or releases them.
extension Vault {
    /// Records a local change; call inside the transaction that makes the change.
    func enqueue(_ op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?) throws {
        try outboxTable.append(op, nodeId: nodeId, payload: payload, baseVersion: baseVersion, requestId: Self.newRequestId(), now: Vault.now)
    }

    static func newRequestId() -> String { SecureRandom.uuidString() }

    /// Every outbox entry, oldest first (the replay order).
    public func outbox() throws -> [OutboxEntry] {
        try outboxTable.entries()
    }

    /// The entries of one node, oldest first.
    func outbox(nodeId: String) throws -> [OutboxEntry] {
        try outboxTable.entries(nodeId: nodeId)
    }

    /// Entry `seq` as it is now, or nil once it is gone.
    public func outboxEntry(seq: Int64) throws -> OutboxEntry? {
        try outboxTable.entry(seq: seq)
    }

    /// The state of entry `seq` now, or nil once it is gone (another command may hold it meanwhile).
    public func outboxState(seq: Int64) throws -> OutboxState? {
        try outboxTable.state(seq: seq)
    }

    /// Notes that entry `seq` is about to be sent: if the process dies before the answer is
    /// recorded, the next replay knows the server may already have applied it.
    public func markOutboxSent(seq: Int64) throws {
        try outboxTable.markSent(seq: seq, at: Vault.now)
    }

    /// The server id this device chose for the node entry `e` creates (a folder, or a new file's
    /// first upload): `proposed` (by default a new random id) stored in the entry now when it has
    /// none, so it is on disk before the first request that carries it.
    public func clientId(for e: OutboxEntry, proposing proposed: String = RemoteCodec.newId()) throws -> String {
        try db.transaction {
            var p = try outboxTable.payload(seq: e.seq) ?? e.payload
            if let id = p.clientId { return id }
            let id = proposed
            p.clientId = id
            try outboxTable.setPayload(seq: e.seq, p)
            return id
        }
    }

    /// Records that entry `seq` could not be replayed: `.conflict` or `.failed`, with the reason
    /// people see in `vault status`.
    public func markOutbox(seq: Int64, _ state: OutboxState, reason: String) throws {
        try outboxTable.markFailed(seq: seq, state, reason: reason)
    }

    // MARK: - Holds (`vault transfers pause|cancel|resume`)

    /// Pauses (or cancels) the entries of `nodeId` still to replay. Returns how many it marked.
    /// Only bookkeeping: safe beside a running `vault sync`, which notices at its next progress write.
    @discardableResult
    public func holdOutbox(nodeId: String, cancel: Bool) throws -> Int {
        try outboxTable.hold(nodeId: nodeId, as: cancel ? .cancelled : .paused)
    }

    /// Puts paused or cancelled entries (of one node, or all) back in line, with their transfers.
    @discardableResult
    public func releaseOutbox(nodeId: String?) throws -> Int {
        try db.transaction {
            try transfersTable.requeueHeld(nodeId: nodeId)
            return try outboxTable.release(nodeId: nodeId)
        }
    }

    /// `paused` or `cancelled` when the user holds the uploads of `nodeId`, else nil.
    public func outboxHold(nodeId: String) throws -> OutboxState? {
        try outboxTable.hold(nodeId: nodeId)
    }

    /// Unfinished upload transfers whose entries the user holds: the sync layer aborts a
    /// cancelled one's server session and shows each as paused or cancelled.
    public func heldUploadTransfers() throws -> [(transfer: TransferRow, hold: OutboxState)] {
        try transfersTable.heldUploads()
    }

    // MARK: - For people

    /// Entries by state (paused and cancelled ones as held, a state of another version of vault as
    /// failed): the maintained counters, not a count.
    public func outboxCounts() throws -> OutboxCounts {
        let v = try countersTable.values()
        var c = OutboxCounts()
        c.pending = Int(v[.outboxPending] ?? 0)
        c.conflict = Int(v[.outboxConflict] ?? 0)
        c.failed = Int(v[.outboxFailed] ?? 0)
        c.held = Int(v[.outboxHeld] ?? 0)
        return c
    }

    /// Entries in conflict or failed, oldest first (at most `limit`), with their reasons. No
    /// look at the outbox when the counters say there are none.
    public func outboxProblems(limit: Int = 20) throws -> [OutboxProblem] {
        let c = try outboxCounts()
        guard c.conflict + c.failed > 0 else { return [] }
        return try outboxTable.problems(limit: limit).map { e in
                let path = try node(id: e.nodeId).map { try self.path(of: $0) } ?? "(removed) \(e.payload.name ?? e.nodeId)"
                return OutboxProblem(path: path, op: e.op, state: e.state, reason: e.lastError)
            }
    }
}
