import Foundation
internal import CGioShims
#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus signal the agent acts on.
enum BusSignal: Sendable, Equatable {
    /// logind asked the session at `path` to lock (`loginctl lock-session`, a screen locker).
    case sessionLock(path: String)
    /// logind: the machine is about to sleep (`true`) or has woken up (`false`).
    case prepareForSleep(Bool)
    /// The desktop's screen saver became active (`true`) or inactive.
    case screenSaver(active: Bool)
    /// NetworkManager's state changed (a metered or offline network may have changed).
    case network
}

/// A watch on one message bus (GDBus through `bus_shim.c`): the system bus for logind and
/// NetworkManager, the session bus for the screen saver. Signals arrive on GDBus's own thread
/// and are handed to `handler` as they come; the handler must hop to the agent's queue.
final class BusWatch: @unchecked Sendable {
    // SAFETY: `bus` is set once in `init`; the C side serialises callbacks and `close`.
    private var bus: OpaquePointer?
    private let handler: @Sendable (BusSignal) -> Void
    /// "system" or "session".
    let kind: String
    /// The address it connected to, for `status` (nil: this login's default bus).
    let address: String?

    /// Connects; throws (with the bus's message) when the bus cannot be reached.
    init(system: Bool, address: String?, handler: @escaping @Sendable (BusSignal) -> Void) throws {
        self.handler = handler
        self.kind = system ? "system" : "session"
        self.address = address
        var err: UnsafeMutablePointer<CChar>?
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let b = CGioShims_bus_open(address, system ? 1 : 0, busCallback, context, &err) else {
            let msg = err.map { String(cString: $0) } ?? "unknown error"
            CGioShims_free(err)
            throw BusError(message: msg)
        }
        bus = b
    }

    struct BusError: Error, CustomStringConvertible { let message: String; var description: String { message } }

    fileprivate func deliver(kind: Int32, flag: Int32, path: String) {
        switch Int(kind) {
        case CGioShims_BUS_SESSION_LOCK: handler(.sessionLock(path: path))
        case CGioShims_BUS_PREPARE_FOR_SLEEP: handler(.prepareForSleep(flag != 0))
        case CGioShims_BUS_SCREENSAVER: handler(.screenSaver(active: flag != 0))
        case CGioShims_BUS_NETWORK: handler(.network)
        default: break
        }
    }

    var isConnected: Bool { bus.map { CGioShims_bus_is_connected($0) == 1 } ?? false }

    /// Whether logind says the session object `path` belongs to this user; nil when it cannot
    /// tell (no logind on this bus). Blocks for at most two seconds: call it off GDBus's thread.
    func sessionIsOurs(_ path: String) -> Bool? {
        guard let bus else { return nil }
        var err: UnsafeMutablePointer<CChar>?
        let r = CGioShims_bus_session_is_users(bus, path, getuid(), &err)
        CGioShims_free(err)
        return r < 0 ? nil : r == 1
    }

    /// A logind delay inhibitor for sleep, so the agent can lock before the machine sleeps; nil
    /// when logind does not answer (then the lock races the suspend).
    func inhibitSleep() -> Int32? {
        guard let bus else { return nil }
        var err: UnsafeMutablePointer<CChar>?
        let fd = CGioShims_bus_inhibit_sleep(bus, "vault agent", "lock the vault before sleeping", &err)
        CGioShims_free(err)
        return fd >= 0 ? fd : nil
    }

    func close() {
        if let bus { CGioShims_bus_close(bus) }
    }
}

/// The C callback: finds the watch from its context pointer (the watch outlives its bus).
private func busCallback(_ context: UnsafeMutableRawPointer?, _ kind: Int32, _ flag: Int32, _ path: UnsafePointer<CChar>?) {
    guard let context else { return }
    let watch = Unmanaged<BusWatch>.fromOpaque(context).takeUnretainedValue()
    watch.deliver(kind: kind, flag: flag, path: path.map { String(cString: $0) } ?? "")
}
