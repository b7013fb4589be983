import Foundation
import VaultKeys
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// `vault agent`: one per user and vault. It owns the unlocked session (timers lock it at its
/// deadlines, and on screen lock or before sleep when the policy says so), runs sync passes in
/// the background, keeps the server's push channel open, and serves commands over a Unix socket
/// that only this user may use.
///
/// All state lives on one serial queue; threads of their own only wait (for connections, a
/// helper's output, memory pressure) and hand what they get to that queue. Nothing polls.
public final class Agent: @unchecked Sendable {
    // SAFETY: the mutable members are used on `queue` only; the rest is immutable.
    let layout: VaultLayout
    let environment: [String: String]
    let vaultId: String
    let paths: AgentPaths
    let queue = DispatchQueue(label: "vault-agent")
    let log = AgentLog()
    let spawner: Spawner
    let session: SessionHolder
    let work: WorkScheduler
    let feed: ChangeFeed
    let startedAt = SessionHolder.now()
    private(set) var policy: EffectivePolicy
    var systemBus: BusWatch?
    var sessionBus: BusWatch?
    var busProblems: [String] = []
    /// A logind delay inhibitor for sleep, held while `lockOnSuspend` is on.
    var sleepInhibitor: Int32?
    var signalsSeen = 0
    var pressure: MemoryPressureWatch?
    private var signalSources: [DispatchSourceSignal] = []
    /// Connections being served now (bounded).
    let connections = Counter()
    static let maxConnections = 64

    init(layout: VaultLayout, environment: [String: String], vaultId: String, paths: AgentPaths, policy: EffectivePolicy, helper: String) {
        self.layout = layout; self.environment = environment; self.vaultId = vaultId; self.paths = paths; self.policy = policy
        spawner = Spawner(executable: helper)
        session = SessionHolder(ring: KeyringSession(vaultId: vaultId, layout: layout), vaultId: vaultId, queue: queue, log: log)
        work = WorkScheduler(queue: queue, spawner: spawner, log: log, environment: environment)
        feed = ChangeFeed(queue: queue, spawner: spawner, log: log, environment: environment)
    }

    /// Runs the agent for the vault at `layout` until it is stopped (SIGTERM, SIGINT,
    /// `vault agent stop`); its helpers are `helper` (the `vault` executable). Throws when it
    /// cannot start: no vault, no keyring, no runtime folder, or another agent already runs for
    /// this vault.
    static func run(layout: VaultLayout, environment: [String: String], policy: EffectivePolicy, helper: String) throws -> Never {
        let (file, _) = try KeyslotFile.read(layout)
        let keyring = KeyringSession.availability(environment: environment)
        guard policy.keyring.value != "forbidden" else {
            throw VaultError(.policy, "the policy forbids holding keys in the keyring, where the agent keeps its half of the session")
        }
        if policy.memoryLockRequired.value == true && !SecureBytes.memoryLockingAvailable {
            throw VaultError(.policy, "the policy requires locked memory for keys, and mlock is not permitted here (RLIMIT_MEMLOCK)",
                             hint: "raise the memlock limit for the user service (LimitMEMLOCK=)")
        }
        guard keyring.available else {
            throw VaultError(.usage, "the agent needs a Secret Service keyring for the session, and \(keyring.reason)",
                             hint: "start it inside your desktop session (systemd user service), where the keyring runs")
        }
        guard let paths = AgentPaths(localId: layout.localId(vaultId: file.body.vaultId), environment: environment) else {
            throw VaultError(.usage, "XDG_RUNTIME_DIR is not set (or not an absolute path): the agent's socket lives there",
                             hint: "run it as a systemd user service (`vault agent install`), which sets it")
        }
        try paths.ensureDirectory()
        try claimPidFile(paths)
        let agent = Agent(layout: layout, environment: environment, vaultId: file.body.vaultId, paths: paths, policy: policy, helper: helper)
        try agent.start()
        dispatchMain()
    }

    /// Takes the pid file's lock (kept open for the life of the process) and writes the pid.
    private static func claimPidFile(_ paths: AgentPaths) throws {
        let fd = open(paths.pidFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot open \(paths.pidFile): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buf = [UInt8](repeating: 0, count: 16)
            let n = pread(fd, &buf, 15, 0)
            let pid = n > 0 ? String(decoding: buf[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
            close(fd)
            throw VaultError(.busy, "an agent already runs for this vault (pid \(pid))", hint: "`vault agent status` shows it; `vault agent stop` stops it")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        // The descriptor stays open (and locked) until the process ends.
    }

    private func start() throws {
        let listener = try UnixSocket.listen(at: paths.socket)
        queue.sync {
            wire()
            watchBuses()
            pressure = MemoryPressureWatch.start(environment: environment, log: log) { [weak self] what in
                guard let self else { return }
                queue.async { self.memoryPressure(what) }
            }
            handleTermination()
            session.adoptAtStart()
        }
        let accept = Thread { [self] in acceptLoop(listener) }
        accept.name = "vault-agent-accept"
        accept.start()
        log("started for the vault \(vaultId.prefix(8))… at \(layout.root) (pid \(getpid()), socket \(paths.socket))"
            + "; memory pressure: \(pressure?.description ?? "not watched (no PSI or cgroup memory.events)")")
    }

    /// Connects the parts: a lock stops the work and the push channel; an unlock starts them.
    private func wire() {
        session.policy = { [weak self] in self?.currentPolicy() ?? .none }
        session.onLocked = { [weak self] _ in
            self?.work.sessionEnded()
            self?.feed.set(on: false)
            self?.updateSleepInhibitor()
        }
        session.onUnlocked = { [weak self] in
            guard let self else { return }
            updateSleepInhibitor()
            work.request("the vault was unlocked")
            if work.loggedIn == true { feed.set(on: true) }
        }
        work.isUnlocked = { [weak self] in self?.session.isUnlocked ?? false }
        work.onLoggedIn = { [weak self] in
            guard let self else { return }
            feed.set(on: $0 && session.isUnlocked)
        }
        feed.onEvent = { [weak self] id in self?.work.request("a change on the server (event \(id ?? "-"))") }
    }

    /// The effective policy now, read again (a policy that cannot be read keeps the last good one).
    func currentPolicy() -> EffectivePolicy {
        do { policy = try PolicyLoader.load(layout: layout, environment: environment) } catch {
            log("the policy cannot be read (\(VaultError.wrap(error).message)); the last good one stays in force")
        }
        updateSleepInhibitor()   // lockOnSuspend may have changed
        return policy
    }

    private func memoryPressure(_ what: String) {
        log(what + ": background transfers pause, freed memory is returned to the system")
        work.memoryPressure(what)
    }

    /// SIGTERM, SIGINT, SIGHUP: lock and exit.
    private func handleTermination() {
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [weak self] in self?.shutdown("signal \(sig)") }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Locks (the keyring item goes, the agent key is zeroed), ends the helpers, removes the
    /// socket, and exits. On the queue.
    func shutdown(_ why: String) -> Never {
        log("stopping (\(why)): the vault locks")
        session.lock(reason: "the agent stopped")
        work.killNow()
        feed.set(on: false)
        systemBus?.close()
        sessionBus?.close()
        unlink(paths.socket)
        exit(0)
    }
}

/// A count shared between threads.
final class Counter: @unchecked Sendable {
    // SAFETY: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = 0

    /// Adds one unless `limit` is reached; returns whether it did.
    func enter(limit: Int) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard value < limit else { return false }
        value += 1
        return true
    }

    func leave() { lock.lock(); value -= 1; lock.unlock() }
}
