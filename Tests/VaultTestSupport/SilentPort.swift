import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that drops every new connection attempt, as an unreachable host or a
/// firewall does (neither refused nor answered): a listening socket with a backlog of 0 that
/// never accepts, its accept queue filled by one connection of its own, so the kernel drops the
/// SYN of every further one (`sk_acceptq_is_full`). Deterministic on loopback, no root needed.
/// Closed on deinit.
public final class SilentPort: @unchecked Sendable {
    public let port: UInt16
    private var fds: [Int32] = []

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw FreePortError(description: "socket() failed: errno \(errno)") }
        fds.append(listener)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) == 0 && getsockname(listener, $0, &len) == 0 }
        }
        guard bound, listen(listener, 0) == 0 else {
            fds.forEach { close($0) }
            throw FreePortError(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        port = UInt16(bigEndian: addr.sin_port)
        // The one connection the queue holds: a blocking connect returns once the handshake is
        // done, so the queue is full before the caller's first attempt.
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        fds.append(filler)
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            fds.forEach { close($0) }
            throw FreePortError(description: "cannot fill the accept queue of 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { fds.forEach { close($0) } }
}
