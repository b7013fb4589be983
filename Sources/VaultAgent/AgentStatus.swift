import Foundation

/// What the agent holds and does, for `vault agent status` and `vault status`.
public struct AgentStatus: Codable, Sendable {
    public var pid: Int32
    public var vaultId: String
    public var startedAt: Double
    /// The unlocked session's clock; nil while locked.
    public var session: SessionInfo?
    /// Why the session ended by itself (deadline, screen lock, suspend…), while locked.
    public var lockReason: String?
    public var lockedAt: Double?
    public var lockOnScreenLock: Bool
    public var lockOnSuspend: Bool
    /// The buses watched for screen-lock and sleep signals, each with its state.
    public var buses: [String]
    /// Whether a logind delay inhibitor is held, so the vault locks before the machine sleeps.
    public var sleepInhibitor: Bool
    /// Signals received that could lock (whether or not the policy asked to).
    public var signals: Int
    /// What is watched for memory pressure (nil: nothing could be).
    public var memoryWatch: String?
    public var work: WorkStatus
    public var events: EventStatus

    public var locked: Bool { session == nil }
}

/// The background sync passes.
public struct WorkStatus: Codable, Sendable {
    public var state: String
    public var passes: Int
    public var lastPassAt: Double?
    public var lastResult: String?
    public var lastError: String?
    public var nextAttemptAt: Double?
    /// Whether the vault is logged in to a server (nil: not known yet).
    public var loggedIn: Bool?
    public var workerPid: Int32?
    public var pressureEvents: Int
    public var lastPressure: String?
    public var pausedUntil: Double?
}

/// The push channel (`GET /v1/events`).
public struct EventStatus: Codable, Sendable {
    public var connected: Bool
    public var lastEventId: String?
    /// Events received since the agent started.
    public var events: Int
    public var connects: Int
    public var lastError: String?
    public var listenerPid: Int32?
}
