import Foundation
import VaultKeys
import VaultSyncPlan
import VaultCrypto

/// A request to the agent. One JSON object per frame (see `AgentWire`); `op` says what.
public struct AgentRequest: Codable, Sendable {
    public enum Op: String, Codable, Sendable {
        /// What the agent holds and does (`AgentStatus`). Not a use of the vault.
        case status
        /// The master key (in the frame's secret) and the session's deadlines; counts as use
        /// unless `background` (the agent's own worker).
        case session
        /// Hold this master key (secret) for `epoch`, `idleTimeout`, `absoluteTimeout` (`vault unlock`).
        case hold
        /// Replace the held master key (secret) after a rotation to `epoch`.
        case replace
        /// Lock now.
        case lock
        /// Stop background work and leave the vault to the caller until it sends `release` (or its
        /// connection closes).
        case yield
        /// The caller is done with the vault (one `yield` less).
        case release
        /// Changes are waiting: run a sync pass when possible (`vault put`, `vault pin`, `vault login`).
        case work
        /// Run a sync pass now with `sync` options and answer with its result (`vault sync`).
        case sync
        /// Lock and exit.
        case stop
    }

    public var op: Op
    public var background: Bool?
    public var epoch: UInt32?
    public var idleTimeout: Int64?
    public var absoluteTimeout: Int64?
    public var reason: String?
    public var sync: SyncRequest?

    public init(_ op: Op) { self.op = op }
}

extension SyncRequest {
    /// The worker's command-line arguments for this request (`vault agent work`).
    var arguments: [String] {
        (allowMetered ? ["--allow-metered"] : []) + (concurrency.map { ["--concurrency", String($0)] } ?? [])
            + (pinnedOnly ? ["--pinned-only"] : []) + (maxDelete.map { ["--max-delete", String($0)] } ?? []) + (force ? ["--force"] : [])
    }
}

/// The agent's answer.
public struct AgentResponse: Codable, Sendable {
    public var ok: Bool
    public var error: AgentError?
    /// `session`, `hold`: the session's deadlines (nil: locked).
    public var session: SessionInfo?
    /// `session` while locked: why the agent locked by itself (nil after `vault lock`).
    public var lockedReason: String?
    /// `lock`: whether a session was there.
    public var wasUnlocked: Bool?
    public var status: AgentStatus?
    /// `sync`: what the pass did.
    public var work: WorkResult?

    public init(ok: Bool = true) { self.ok = ok }

    static func failure(_ e: VaultError) -> AgentResponse {
        var r = AgentResponse(ok: false)
        r.error = AgentError(e)
        return r
    }
}

/// A `VaultError` on the wire.
public struct AgentError: Codable, Sendable, Equatable {
    public var kind: String
    public var message: String
    public var hint: String?

    public init(_ e: VaultError) { kind = e.kind.rawValue; message = e.message; hint = e.hint }

    public var vaultError: VaultError { VaultError(VaultError.Kind(rawValue: kind) ?? .io, message, hint: hint) }
}

/// An unlocked session's clock, in seconds since the epoch (fractions kept: idle is measured to
/// the second).
public struct SessionInfo: Codable, Sendable, Equatable {
    public var epoch: UInt32
    public var unlockedAt: Double
    public var lastUsedAt: Double
    public var idleTimeout: Int64
    public var absoluteTimeout: Int64
    /// When it locks unless used again (nil: never).
    public var locksAt: Double?

    /// The `KeyringSession.Record` the session code uses, with `masterKey`.
    func record(_ masterKey: SecureBytes) -> KeyringSession.Record {
        KeyringSession.Record(masterKey: masterKey, epoch: epoch, unlockedAt: Int64(unlockedAt), lastUsedAt: Int64(lastUsedAt),
                              idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout)
    }
}

/// What one sync pass of the agent's worker did (also the answer to a `sync` request).
public struct WorkResult: Codable, Sendable {
    /// False when the vault is not logged in to a server (nothing to sync, no push channel).
    public var loggedIn: Bool
    public var summary: PushSummary?
    /// What the pull of a two-way pass did (nil for a pinned-only pass).
    public var pull: PullSummary?
    /// Where the metered state came from, when something waits for an unmetered network.
    public var meteredSource: String?
    /// The policy requires unmetered networks for large transfers.
    public var unmeteredOnly = false
    public var pinnedOnly = false
    /// The pass failed (the summary is then nil).
    public var error: AgentError?

    public init(loggedIn: Bool) { self.loggedIn = loggedIn }
}

/// The wire format: each message is a frame
/// `u32be(jsonLength) ‖ u32be(secretLength) ‖ json ‖ secret`, with 1 ≤ jsonLength ≤ 1 MiB and
/// secretLength 0 or 32 (a master key, read straight into locked memory, never into JSON).
enum AgentWire {
    static let maxJSON = 1 << 20
    static let secretSize = 32
    /// The longest the rest of a frame may take once its first byte arrived.
    static let frameTimeout: TimeInterval = 10

    struct Closed: Error {}
    struct TimedOut: Error {}
    struct Malformed: Error {}

    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    static func send<T: Encodable>(_ value: T, secret: SecureBytes? = nil, on socket: UnixSocket) throws {
        let json = [UInt8](try encoder().encode(value))
        var header = [UInt8](repeating: 0, count: 8)
        for i in 0..<4 {
            header[i] = UInt8(truncatingIfNeeded: json.count >> (24 - 8 * i))
            header[4 + i] = UInt8(truncatingIfNeeded: (secret?.count ?? 0) >> (24 - 8 * i))
        }
        try (header + json).withUnsafeBytes { try socket.writeAll($0) }
        try secret?.withUnsafeBytes { try socket.writeAll($0) }
    }

    /// The next frame, or nil at a clean end of stream. `firstByteTimeout` nil waits for ever.
    static func receive<T: Decodable>(_ type: T.Type, on socket: UnixSocket, firstByteTimeout: TimeInterval?) throws -> (T, SecureBytes?)? {
        var header = [UInt8](repeating: 0, count: 8)
        guard try header.withUnsafeMutableBytes({ try socket.readExactly($0, firstByteTimeout: firstByteTimeout, timeout: frameTimeout) }) else {
            return nil
        }
        let jsonLength = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
        let secretLength = header[4..<8].reduce(0) { $0 << 8 | Int($1) }
        guard (1...maxJSON).contains(jsonLength), secretLength == 0 || secretLength == secretSize else { throw Malformed() }
        var json = [UInt8](repeating: 0, count: jsonLength)
        _ = try json.withUnsafeMutableBytes { try socket.readExactly($0, firstByteTimeout: frameTimeout, timeout: frameTimeout) }
        var secret: SecureBytes?
        if secretLength > 0 {
            let s = SecureBytes(count: secretLength)
            _ = try s.withUnsafeMutableBytes { try socket.readExactly($0, firstByteTimeout: frameTimeout, timeout: frameTimeout) }
            secret = s
        }
        guard let value = try? JSONDecoder().decode(T.self, from: Data(json)) else { throw Malformed() }
        return (value, secret)
    }
}
