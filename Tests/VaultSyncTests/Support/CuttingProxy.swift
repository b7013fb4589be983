import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of a server that can cut a connection part-way through a
/// request or an answer (`cut(after:_:)`): a network that drops, at a byte the test chooses.
/// Counts the bytes it forwards each way.
final class CuttingProxy: @unchecked Sendable {
    let port: UInt16
    private let target: UInt16
    private let listener: Int32
    private let lock = NSLock()
    // SAFETY: the fields below are guarded by `lock`.
    private var budget: [Direction: Int] = [:]
    private var forwarded: [Direction: Int] = [.toServer: 0, .toClient: 0]
    private var open: Set<Int32> = []
    private var stopped = false

    init(to target: UInt16) throws {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = Self.loopback(0)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw CocoaError(.fileWriteUnknown) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listener = fd
        port = UInt16(bigEndian: addr.sin_port)
        Thread { [self] in acceptLoop() }.start()
    }

    enum Direction { case toServer, toClient }

    /// Cuts the connection that forwards the `bytes`-th byte from now in `direction`, right after
    /// it (once).
    func cut(after bytes: Int, _ direction: Direction) { lock.withLock { budget[direction] = bytes } }

    /// Bytes forwarded in `direction` so far.
    func forwarded(_ direction: Direction) -> Int { lock.withLock { forwarded[direction]! } }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR)); close(listener)
        // Under the lock: a descriptor still in `open` is not closed yet (its pumps remove it first).
        lock.withLock {
            stopped = true
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { if errno == EINTR { continue }; return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = Self.loopback(target)
            let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard ok == 0, lock.withLock({ () -> Bool in
                guard !stopped else { return false }
                open.insert(client); open.insert(upstream); return true
            }) else { close(client); close(upstream); continue }
            let pair = Pair()
            Thread { [self] in pump(from: client, to: upstream, .toServer, pair) }.start()
            Thread { [self] in pump(from: upstream, to: client, .toClient, pair) }.start()
        }
    }

    /// The two pumps of one connection: the last one to end closes both descriptors (so neither
    /// reads a descriptor number already reused).
    private final class Pair: @unchecked Sendable { var running = 2 }   // SAFETY: `running` is guarded by the proxy's `lock`

    /// Copies `from` to `to` until either side ends (or a cut); then shuts both down.
    private func pump(from: Int32, to: Int32, _ direction: Direction, _ pair: Pair) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        loop: while true {
            let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            var toSend = n, cutHere = false
            lock.withLock {
                if let b = budget[direction] {
                    if n >= b { toSend = b; cutHere = true; budget[direction] = nil } else { budget[direction] = b - n }
                }
                forwarded[direction]! += toSend
            }
            var sent = 0
            while sent < toSend {
                let w = buffer.withUnsafeBytes { Glibc.send(to, $0.baseAddress! + sent, toSend - sent, Int32(MSG_NOSIGNAL)) }   // a closed peer is EPIPE, not SIGPIPE
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else { break loop }
                sent += w
            }
            if cutHere { break }
        }
        shutdown(from, Int32(SHUT_RDWR)); shutdown(to, Int32(SHUT_RDWR))
        let last = lock.withLock { () -> Bool in
            pair.running -= 1
            guard pair.running == 0 else { return false }
            open.remove(from); open.remove(to)
            return true
        }
        if last { close(from); close(to) }
    }
}
