import Foundation

/// The request-head deadline: a connection must deliver a complete request head within
/// `headerTimeout` seconds of opening, or of the end of its previous request. libmicrohttpd's own
/// timeout only counts idle time, so a client that trickles one header byte at a time would hold
/// its connection for ever; this cuts it (`shutdown`, after which libmicrohttpd closes it).
///
/// Keys are opaque connection identities; time is whatever monotonic clock the caller passes,
/// so tests drive it by hand.
final class ConnectionWatch: @unchecked Sendable {
    // SAFETY: `entries` is only touched with `lock` held. `cut` runs with it held, so a
    // connection's socket cannot be closed (and its number reused) between the check and the cut:
    // libmicrohttpd reports the close (`closed`) before it closes the socket.
    private let lock = NSLock()
    private var entries: [UInt: Entry] = [:]
    private let headerTimeout: Double
    private let cut: (Int32) -> Void

    private struct Entry {
        let fd: Int32
        /// When it started waiting for a request head; nil while a request is in progress.
        var waitingSince: Double?
    }

    /// `headerTimeout` ≤ 0 turns the deadline off. `cut` ends a connection given its socket.
    init(headerTimeout: Double, cut: @escaping (Int32) -> Void) {
        self.headerTimeout = headerTimeout; self.cut = cut
    }

    func opened(_ key: UInt, fd: Int32, now: Double) {
        lock.lock(); entries[key] = Entry(fd: fd, waitingSince: now); lock.unlock()
    }

    /// A complete request head arrived.
    func headReceived(_ key: UInt) {
        lock.lock(); entries[key]?.waitingSince = nil; lock.unlock()
    }

    /// A request ended; on a kept-alive connection the next head is due from now.
    func requestEnded(_ key: UInt, now: Double) {
        lock.lock(); if entries[key] != nil { entries[key]?.waitingSince = now }; lock.unlock()
    }

    func closed(_ key: UInt) {
        lock.lock(); entries.removeValue(forKey: key); lock.unlock()
    }

    /// Cuts every connection past its deadline; returns how many.
    @discardableResult
    func expire(now: Double) -> Int {
        guard headerTimeout > 0 else { return 0 }
        lock.lock(); defer { lock.unlock() }
        var n = 0
        for (key, e) in entries {
            guard let since = e.waitingSince, now - since >= headerTimeout else { continue }
            entries[key]?.waitingSince = nil   // cut once
            cut(e.fd)
            n += 1
        }
        return n
    }

    /// Connections being watched.
    var count: Int { lock.lock(); defer { lock.unlock() }; return entries.count }
}
