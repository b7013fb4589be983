import Foundation
internal import CLinuxShims
import VaultKeys
import VaultSyncPlan
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// When the agent's background sync passes run (`vault agent work`, one at a time): after a
/// change was queued (`vault put`), a push event, an unlock, a `vault sync` request, or a
/// retry time; never while the vault is locked, while a command has the vault (`yield`), or
/// while memory is short. A pass that fails is tried again after an exponential backoff with
/// full jitter (`RetryPolicy`: 5 s doubling to 5 min by default). A pass stopped by a lock, a
/// command or memory pressure resumes later from the database, as `vault sync` does after a kill.
///
/// Confined to the agent's queue.
final class WorkScheduler: @unchecked Sendable {
    // SAFETY: every member is used on `queue` only (timers and child callbacks hop there).
    struct Waiter {
        let options: SyncRequest
        let reply: (WorkResult) -> Void
    }

    private let queue: DispatchQueue
    private let spawner: Spawner
    private let log: AgentLog
    private let retry: RetryPolicy
    /// How long background passes pause after a memory-pressure event.
    private let pressureCooldown: Double
    /// How often a transfer that waits for an unmetered network is looked at again (besides
    /// NetworkManager's signals).
    private let meteredRecheck: Double
    var isUnlocked: () -> Bool = { false }
    /// Whether the vault is logged in to a server, each time a pass finds out.
    var onLoggedIn: (Bool) -> Void = { _ in }

    private var wanted = false
    private var worker: ChildProcess?
    private var workerLines: [String] = []
    private var running: [Waiter] = []
    private var queued: [Waiter] = []
    private var stopReason: String?
    private var stopWaiters: [DispatchSemaphore] = []
    private var yields = 0
    private var attempt = 0
    private var pausedUntil: Double?
    private var waitingForUnmetered = 0
    private lazy var retryTimer = DeadlineTimer(queue: queue) { [weak self] in self?.kick() }
    private lazy var pressureTimer = DeadlineTimer(queue: queue) { [weak self] in
        self?.pausedUntil = nil
        self?.kick()
    }

    // For `status`.
    private(set) var passes = 0
    private(set) var lastPassAt: Double?
    private(set) var lastResult: String?
    private(set) var lastError: String?
    private(set) var loggedIn: Bool?
    private(set) var pressureEvents = 0
    private(set) var lastPressure: String?

    init(queue: DispatchQueue, spawner: Spawner, log: AgentLog, environment: [String: String]) {
        self.queue = queue; self.spawner = spawner; self.log = log
        func seconds(_ key: String, _ d: Double) -> Double { environment[key].flatMap(Double.init).map { $0 / 1000 } ?? d }
        retry = RetryPolicy(base: seconds("VAULT_AGENT_RETRY_BASE_MS", 5), cap: seconds("VAULT_AGENT_RETRY_CAP_MS", 300))
        pressureCooldown = seconds("VAULT_AGENT_PRESSURE_PAUSE_MS", 60)
        meteredRecheck = seconds("VAULT_AGENT_METERED_RECHECK_MS", 900)
    }

    /// Changes wait for the server (or the agent just learned it may sync): run a pass when allowed.
    func request(_ why: String) {
        log("sync wanted: \(why)")
        wanted = true
        retryTimer.clear()
        kick()
    }

    /// `vault sync`: a pass with these options now (after the one running); `reply` gets its result.
    func enqueueSync(_ options: SyncRequest, reply: @escaping (WorkResult) -> Void) {
        guard isUnlocked() else { return reply(Self.failed(.locked, "the vault is locked", hint: "run `vault unlock`")) }
        queued.append(Waiter(options: options, reply: reply))
        kick()
    }

    /// Starts a pass when one is wanted and nothing stands in the way.
    func kick() {
        guard worker == nil, isUnlocked(), yields == 0 else { return }
        let now = SessionHolder.now()
        if let until = pausedUntil, now < until { return }
        if queued.isEmpty {
            guard wanted else { return }
            if let at = retryTimer.firesAt, at > now { return }   // a background pass waits out its backoff
        }
        retryTimer.clear()
        wanted = false
        let options = queued.first?.options ?? SyncRequest()
        running = queued.filter { $0.options == options }
        queued.removeAll { $0.options == options }
        workerLines = []
        do {
            worker = try ChildProcess.start(["agent", "work"] + options.arguments, name: "worker", spawner: spawner, queue: queue,
                                            onLine: { [weak self] in self?.workerLines.append($0) },
                                            onExit: { [weak self] in self?.workerExited($0) })
            log("sync pass started (pid \(worker!.pid))")
        } catch {
            lastError = "\(error)"
            answer(running, Self.failed(.io, "the agent could not start its worker: \(error)"))
            running = []
            scheduleRetry()
        }
    }

    private func workerExited(_ status: Int32) {
        let stoppedBecause = stopReason
        stopReason = nil
        worker = nil
        stopWaiters.forEach { $0.signal() }
        stopWaiters = []
        let result = try? JSONDecoder().decode(WorkResult.self, from: Data(workerLines.joined().utf8))
        if let why = stoppedBecause {
            log("sync pass stopped: \(why)")
            lastResult = "stopped: \(why)"
            wanted = true   // it resumes from the database when allowed again
            if isUnlocked() { queued = running + queued } else {
                answer(running, Self.failed(.locked, "the vault locked while the sync ran (\(why)); it resumes after `vault unlock`"))
            }
        } else if let result {
            finished(result)
        } else {
            lastError = "the worker ended without a result (\(ChildProcess.describe(status)))"
            log("sync pass failed: \(lastError!)")
            answer(running, Self.failed(.io, lastError!))
            scheduleRetry()
        }
        running = []
        kick()
    }

    private func finished(_ result: WorkResult) {
        passes += 1
        lastPassAt = SessionHolder.now()
        answer(running, result)
        if !result.loggedIn && (result.error.map { VaultError.Kind(rawValue: $0.kind) == .notFound } ?? true) {
            if loggedIn != false { onLoggedIn(false) }
            loggedIn = false
            attempt = 0
            lastError = nil
            lastResult = "not logged in to a server"
            return
        }
        if let e = result.error {
            lastError = e.message
            log("sync pass failed: \(e.message)")
            switch VaultError.Kind(rawValue: e.kind) {
            case .locked?, .policy?, .notInitialized?: break   // waits for an unlock, a fixed policy, a vault
            case .busy?:
                wanted = true
                retryTimer.set(after: 1 + Double.random(in: 0...1))   // another command had the vault
            default: scheduleRetry()
            }
            return
        }
        attempt = 0
        lastError = nil
        if loggedIn != true { onLoggedIn(true) }
        loggedIn = true
        guard let s = result.summary else { return }
        lastResult = "\(s.done) change(s) synced, \(s.downloaded) pinned file(s) downloaded"
            + (s.conflicts > 0 ? ", \(s.conflicts) conflict(s)" : "") + (s.waitingForUnmetered > 0 ? ", \(s.waitingForUnmetered) waiting for an unmetered network" : "")
        log("sync pass done: \(lastResult!)")
        waitingForUnmetered = s.waitingForUnmetered
        if waitingForUnmetered > 0 {
            wanted = true
            retryTimer.set(after: meteredRecheck)
        }
    }

    private func scheduleRetry() {
        let wait = retry.delay(attempt: attempt, retryAfter: nil)
        attempt += 1
        wanted = true
        retryTimer.set(after: wait)
        log("next sync attempt in \(String(format: "%.1f", wait)) s")
    }

    private func answer(_ waiters: [Waiter], _ result: WorkResult) { waiters.forEach { $0.reply(result) } }

    static func failed(_ kind: VaultError.Kind, _ message: String, hint: String? = nil) -> WorkResult {
        var r = WorkResult(loggedIn: false)
        r.error = AgentError(VaultError(kind, message, hint: hint))
        return r
    }

    /// Stops the running pass (SIGTERM, SIGKILL two seconds later): an upload stops where it is
    /// and resumes later where the server says it got.
    private func stopWorker(_ why: String) -> DispatchSemaphore? {
        guard let w = worker else { return nil }
        let done = DispatchSemaphore(value: 0)
        stopWaiters.append(done)
        if stopReason == nil {
            stopReason = why
            w.signal(SIGTERM)
            queue.asyncAfter(deadline: .now() + 2) { [weak self] in
                if self?.worker === w { w.signal(SIGKILL) }
            }
        }
        return done
    }

    // MARK: - Commands, locks, pressure, network

    /// A command wants the vault: the pass stops; returns what to wait on until it has.
    func beginYield() -> DispatchSemaphore? {
        yields += 1
        return stopWorker("a command needs the vault")
    }

    /// The command that had the vault ended.
    func endYield() {
        yields = max(0, yields - 1)
        kick()
    }

    /// The session ended: the pass stops (with the key it holds), `vault sync` requests fail.
    func sessionEnded() {
        _ = stopWorker("the vault locked")
        retryTimer.clear()
        answer(queued, Self.failed(.locked, "the vault locked", hint: "run `vault unlock`"))
        queued = []
    }

    /// Memory is short: the pass stops (its buffers go with it) and passes pause for a while.
    func memoryPressure(_ what: String) {
        pressureEvents += 1
        lastPressure = what
        let until = SessionHolder.now() + pressureCooldown
        pausedUntil = until
        pressureTimer.set(at: until)
        if stopWorker("memory pressure") != nil { log("stopped the sync pass until \(Date(timeIntervalSince1970: until)) (\(what))") }
        CLinuxShims_release_free_memory()
    }

    /// The network changed: a pass that waited for an unmetered network or failed runs again.
    func networkChanged() {
        guard waitingForUnmetered > 0 || lastError != nil else { return }
        attempt = 0
        request("the network changed")
    }

    var status: WorkStatus {
        let now = SessionHolder.now()
        let state: String
        if let w = worker { state = stopReason == nil ? "running (pid \(w.pid))" : "stopping (\(stopReason!))" }
        else if yields > 0 { state = "paused while a command has the vault" }
        else if let until = pausedUntil, until > now { state = "paused after memory pressure" }
        else if !isUnlocked() { state = wanted ? "waiting for `vault unlock`" : "idle (locked)" }
        else if let at = retryTimer.firesAt, wanted { state = at - now > 0 ? "waiting to retry" : "starting" }
        else { state = "idle" }
        return WorkStatus(state: state, passes: passes, lastPassAt: lastPassAt, lastResult: lastResult, lastError: lastError,
                          nextAttemptAt: wanted ? retryTimer.firesAt : nil, loggedIn: loggedIn, workerPid: worker?.pid,
                          pressureEvents: pressureEvents, lastPressure: lastPressure,
                          pausedUntil: pausedUntil.flatMap { $0 > now ? $0 : nil })
    }

    /// Ends the running pass at once (the agent is stopping).
    func killNow() { worker?.signal(SIGKILL) }
}
