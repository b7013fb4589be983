import Foundation
internal import CLinuxShims
#if canImport(Glibc)
import Glibc
#endif

/// One thread that watches the sockets of long-lived responses (event streams) for the client
/// closing its side, so a closed stream is released at once, not at its next write. An idle
/// stream writes nothing (and libmicrohttpd does not watch a suspended connection), so without
/// this a closed stream would hold its slot until the next keep-alive fails.
///
/// A client that vanishes without closing (cable pulled) is still only noticed when a write
/// fails, after TCP gives up.
final class HangupWatcher: @unchecked Sendable {
    // SAFETY: `handlers`, `nextID` and `stopped` are only touched with `lock` held; `epfd` and
    // `wakeFD` are set once in init and closed once after the thread has ended.
    private let lock = NSLock()
    private var handlers: [UInt64: @Sendable () -> Void] = [:]
    private var nextID: UInt64 = 1
    private var stopped = false
    private let epfd: Int32
    private var wakeFD: Int32 = -1
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        var wake: Int32 = -1
        epfd = CLinuxShims_hangup_create(&wake)
        guard epfd >= 0 else { throw APIError.internal("epoll_create failed: errno \(errno)") }
        wakeFD = wake
        let t = Thread { [self] in loop(); done.signal() }
        t.name = "vault-hangups"
        t.stackSize = 256 << 10
        t.start()
    }

    /// Calls `onHangup` (once, on the watcher thread) when the peer of `fd` closes its side.
    /// Returns a token for `unwatch`, nil if the socket cannot be watched.
    func watch(fd: Int32, onHangup: @escaping @Sendable () -> Void) -> UInt64? {
        lock.lock(); defer { lock.unlock() }
        guard !stopped, fd >= 0 else { return nil }
        let id = nextID
        nextID += 1
        guard CLinuxShims_hangup_add(epfd, fd, id) == 0 else { return nil }
        handlers[id] = onHangup
        return id
    }

    /// Stops watching; call before `fd` is closed (a later descriptor may reuse the number).
    func unwatch(_ id: UInt64, fd: Int32) {
        lock.lock(); defer { lock.unlock() }
        handlers.removeValue(forKey: id)
        // Also after it fired: a fired one-shot entry stays in the set, disabled, until removed.
        if !stopped { _ = CLinuxShims_hangup_remove(epfd, fd) }
    }

    /// Ends the thread and closes the epoll set.
    func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        handlers = [:]
        lock.unlock()
        guard first else { return }
        CLinuxShims_hangup_wake(wakeFD)
        done.wait()
        close(epfd); close(wakeFD)
    }

    private func loop() {
        var ids = [UInt64](repeating: 0, count: 64)
        while true {
            let n = ids.withUnsafeMutableBufferPointer { CLinuxShims_hangup_wait(epfd, $0.baseAddress, 64, -1) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return }
            var fire: [@Sendable () -> Void] = []
            lock.lock()
            if stopped { lock.unlock(); return }
            for id in ids[0..<Int(n)] where id != 0 {
                if let h = handlers.removeValue(forKey: id) { fire.append(h) }
            }
            lock.unlock()
            for h in fire { h() }
        }
    }
}
