import Foundation
import VaultPostgres

/// The doorbell between servers that share one PostgreSQL database: a write that records a change
/// sends `NOTIFY vault_changes, 'OWNER:CURSOR'` in its transaction (so it rings only once
/// committed), and one LISTEN connection per server passes each ring to its `EventHub`, which
/// wakes that owner's event streams. A ring carries no data that could be lost: streams read the
/// change table; after a dropped LISTEN connection the doorbell reconnects and rings every owner
/// with open streams at their newest cursor (a ring missed meanwhile costs nothing).
final class ChangeDoorbell: @unchecked Sendable {
    // SAFETY: `run` is the only user of the state, on its own thread.
    private let url: String
    private let hub: EventHub
    /// The newest cursor of an owner (the rescan after a reconnect).
    private let latestCursor: @Sendable (String) -> Int64?

    init(url: String, hub: EventHub, latestCursor: @escaping @Sendable (String) -> Int64?) {
        self.url = url; self.hub = hub; self.latestCursor = latestCursor
    }

    /// `OWNER:CURSOR` → (owner, cursor); nil for anything else.
    static func parse(_ payload: String) -> (owner: String, cursor: Int64)? {
        guard let colon = payload.lastIndex(of: ":"), let cursor = Int64(payload[payload.index(after: colon)...]) else { return nil }
        return (String(payload[..<colon]), cursor)
    }

    /// Listens until the hub stops, reconnecting (after a second) when the connection drops.
    func run() {
        var rescan = false
        while !hub.isStopped {
            do {
                let db = try PostgresConnection(url: url)
                try db.listen(SQLChangeChannel.name)
                if rescan {
                    for owner in hub.ownersWithStreams { if let c = latestCursor(owner) { hub.publish(owner: owner, cursor: c) } }
                }
                rescan = true
                while !hub.isStopped {
                    for n in try db.notifications(timeoutMillis: 500) {
                        if let (owner, cursor) = Self.parse(n.payload) { hub.publish(owner: owner, cursor: cursor) }
                    }
                }
            } catch {
                AccessLog.message("change doorbell: \(error); listening again in 1 s")
                rescan = true
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }
}
