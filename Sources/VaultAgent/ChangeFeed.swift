import Foundation
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the server's push channel open while the vault is unlocked and logged in: a helper
/// process (`vault agent listen`) holds the connection and prints one line per event; each
/// event asks for a sync pass. When the connection ends it is opened again with the last event
/// id (`Last-Event-ID`), after a backoff with full jitter (1 s doubling to 5 min; reset once a
/// connection brought an event or lasted a minute); a refused token is refreshed once at once.
///
/// Confined to the agent's queue.
final class ChangeFeed: @unchecked Sendable {
    // SAFETY: every member is used on `queue` only (the timer and child callbacks hop there).
    private let queue: DispatchQueue
    private let spawner: Spawner
    private let log: AgentLog
    private let retry: RetryPolicy
    /// Called with each event's id.
    var onEvent: (String?) -> Void = { _ in }

    private var wanted = false
    private var child: ChildProcess?
    private var connected = false
    private var openedAt: Double?
    private var eventsThisConnection = 0
    private var attempt = 0
    private var refreshToken = false
    private(set) var lastEventId: String?
    private var events = 0
    private var connects = 0
    private var lastError: String?
    private lazy var timer = DeadlineTimer(queue: queue) { [weak self] in self?.start() }

    init(queue: DispatchQueue, spawner: Spawner, log: AgentLog, environment: [String: String]) {
        self.queue = queue; self.spawner = spawner; self.log = log
        func seconds(_ key: String, _ d: Double) -> Double { environment[key].flatMap(Double.init).map { $0 / 1000 } ?? d }
        retry = RetryPolicy(base: seconds("VAULT_AGENT_EVENTS_RETRY_BASE_MS", 1), cap: seconds("VAULT_AGENT_EVENTS_RETRY_CAP_MS", 300))
    }

    /// Opens the channel (when `on`) or closes it.
    func set(on: Bool) {
        guard on != wanted else { return }
        wanted = on
        if on { attempt = 0; start() } else { stop() }
    }

    private func start() {
        guard wanted, child == nil else { return }
        timer.clear()
        var args = ["agent", "listen"]
        if let lastEventId { args += ["--last-event-id", lastEventId] }
        if refreshToken { args.append("--refresh-token") }
        refreshToken = false
        do {
            child = try ChildProcess.start(args, name: "listener", spawner: spawner, queue: queue,
                                           onLine: { [weak self] in self?.line($0) },
                                           onExit: { [weak self] in self?.exited($0) })
        } catch {
            lastError = "\(error)"
            reconnectLater()
        }
    }

    private func stop() {
        timer.clear()
        child?.signal(SIGKILL)
        connected = false
    }

    /// A `ListenLine` from the listener (any other line is ignored).
    private func line(_ text: String) {
        switch ListenLine(text: text) {
        case .open?:
            connected = true
            connects += 1
            openedAt = SessionHolder.now()
            eventsThisConnection = 0
            lastError = nil
            log("push channel open" + (lastEventId.map { " (after event \($0))" } ?? ""))
        case .event(let id)?:
            if let id, Self.isPlainId(id) { lastEventId = id }
            events += 1
            eventsThisConnection += 1
            onEvent(id)
        case nil:
            break
        }
    }

    /// Event ids are passed back on a command line: only short plain ids are kept.
    static func isPlainId(_ id: String) -> Bool {
        id.utf8.count <= 64 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 32 >= 97 && $0 | 32 <= 122) || $0 == 45 || $0 == 46 || $0 == 95 }
    }

    private func exited(_ status: Int32) {
        child = nil
        let lasted = openedAt.map { SessionHolder.now() - $0 } ?? 0
        if connected && (eventsThisConnection > 0 || lasted >= 60) { attempt = 0 }
        connected = false
        openedAt = nil
        guard wanted else { return }
        switch ChildProcess.exitCode(status) {
        case .some(ListenExit.ended):
            lastError = "the server ended the stream"
        case .some(ListenExit.tokenRefused) where attempt == 0:
            lastError = "the server refused the token; getting a new one"
            refreshToken = true
            attempt += 1
            start()
            return
        case .some(ListenExit.locked):
            lastError = "the vault is locked"
        case .some(ListenExit.notLoggedIn):
            lastError = "the vault is not logged in to a server"
            wanted = false
            return
        default:
            lastError = "the push channel failed (\(ChildProcess.describe(status)))"
        }
        reconnectLater()
    }

    private func reconnectLater() {
        let wait = retry.delay(attempt: attempt, retryAfter: nil)
        attempt += 1
        log("push channel: \(lastError ?? "closed"); reconnecting in \(String(format: "%.1f", wait)) s")
        timer.set(after: wait)
    }

    var status: EventStatus {
        EventStatus(connected: connected, lastEventId: lastEventId, events: events, connects: connects, lastError: lastError,
                    listenerPid: child?.pid)
    }
}
