import Foundation
import VaultKeys
#if canImport(Glibc)
import Glibc
#endif

/// Screen lock, sleep and network signals over D-Bus, and the status report.
extension Agent {
    /// Connects to the system bus (`VAULT_AGENT_SYSTEM_BUS`, else this machine's) and the session
    /// bus (`DBUS_SESSION_BUS_ADDRESS`); a bus that cannot be reached is reported in `status`.
    func watchBuses() {
        let handler: @Sendable (BusSignal) -> Void = { [weak self] signal in
            guard let self else { return }
            queue.async { self.handle(signal) }
        }
        do { systemBus = try BusWatch(system: true, address: environment["VAULT_AGENT_SYSTEM_BUS"], handler: handler) } catch {
            busProblems.append("system bus: not watched (\(error))")
        }
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            do { sessionBus = try BusWatch(system: false, address: address, handler: handler) } catch {
                busProblems.append("session bus: not watched (\(error))")
            }
        } else {
            busProblems.append("session bus: not watched (DBUS_SESSION_BUS_ADDRESS is unset)")
        }
        for p in busProblems { log(p) }
        updateSleepInhibitor()
    }

    /// Holds a logind delay inhibitor for sleep while `lockOnSuspend` is on (so the lock happens
    /// before the machine sleeps), and none otherwise.
    func updateSleepInhibitor() {
        let want = policy.lockOnSuspend.value == true && session.isUnlocked
        if want, sleepInhibitor == nil, let fd = systemBus?.inhibitSleep() {
            sleepInhibitor = fd
        } else if !want, let fd = sleepInhibitor {
            close(fd)
            sleepInhibitor = nil
        }
    }

    func handle(_ signal: BusSignal) {
        signalsSeen += 1
        let p = currentPolicy()
        switch signal {
        case .sessionLock(let path):
            guard p.lockOnScreenLock.value == true else { return log("the session \(path) locked; the policy does not ask to lock the vault then (lockOnScreenLock)") }
            if systemBus?.sessionIsOurs(path) == false { return log("ignored the lock of \(path), another user's session") }
            session.lock(reason: "the screen locked (logind Lock of \(path))")
        case .screenSaver(let active):
            guard active else { return }
            guard p.lockOnScreenLock.value == true else { return log("the screen saver started; the policy does not ask to lock the vault then (lockOnScreenLock)") }
            session.lock(reason: "the screen saver started")
        case .prepareForSleep(let sleeping):
            if sleeping {
                if p.lockOnSuspend.value == true { session.lock(reason: "the machine went to sleep") }
                else { log("the machine goes to sleep; the policy does not ask to lock the vault then (lockOnSuspend)") }
                if let fd = sleepInhibitor { close(fd); sleepInhibitor = nil }   // now logind may suspend
            } else {
                log("the machine woke up")
                session.checkDeadlines()   // time spent asleep counts
                updateSleepInhibitor()
            }
        case .network:
            work.networkChanged()
        }
    }

    /// What the agent holds and does now. On the queue.
    func statusNow() -> AgentStatus {
        func bus(_ b: BusWatch?, _ kind: String) -> String? {
            guard let b else { return nil }
            return "\(kind) bus\(b.address.map { " \($0)" } ?? ""): \(b.isConnected ? "watched" : "disconnected")"
        }
        return AgentStatus(
            pid: getpid(), vaultId: vaultId, startedAt: startedAt, session: session.info,
            lockReason: session.isUnlocked ? nil : session.lockReason, lockedAt: session.isUnlocked ? nil : session.lockedAt,
            lockOnScreenLock: policy.lockOnScreenLock.value == true, lockOnSuspend: policy.lockOnSuspend.value == true,
            buses: [bus(systemBus, "system"), bus(sessionBus, "session")].compactMap { $0 } + busProblems,
            sleepInhibitor: sleepInhibitor != nil, signals: signalsSeen, memoryWatch: pressure?.description,
            work: work.status, events: feed.status)
    }
}
