import Foundation
internal import CLinuxShims
import VaultKeys
#if canImport(Glibc)
import Glibc
#endif

/// A Unix stream socket this object owns (closed in `deinit`).
final class UnixSocket: @unchecked Sendable {
    // SAFETY: the descriptor is immutable; reads and writes are the caller's to order.
    let fd: Int32

    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    /// Fills a `sockaddr_un` for `path`; throws when the path does not fit (108 bytes).
    private static func address(_ path: String) throws -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let room = MemoryLayout.size(ofValue: addr.sun_path)
        guard bytes.count < room else {
            throw VaultError(.usage, "the agent socket path \(path) is longer than \(room - 1) bytes",
                             hint: "use a shorter XDG_RUNTIME_DIR")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return addr
    }

    private static func newSocket() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw VaultError(.io, "cannot create a socket: \(String(cString: strerror(errno)))") }
        return fd
    }

    /// Binds and listens at `path` (replacing a stale socket file there), mode 0600.
    static func listen(at path: String) throws -> UnixSocket {
        var addr = try address(path)
        let sock = UnixSocket(fd: try newSocket())
        unlink(path)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw VaultError(.io, "cannot bind \(path): \(String(cString: strerror(errno)))") }
        guard chmod(path, 0o600) == 0, Glibc.listen(sock.fd, 64) == 0 else {
            throw VaultError(.io, "cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        return sock
    }

    /// Connects to `path`; nil when nothing listens there (no socket file, or a stale one).
    static func connect(to path: String) throws -> UnixSocket? {
        var addr = try address(path)
        let sock = UnixSocket(fd: try newSocket())
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(sock.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if rc == 0 { return sock }
        if errno == ENOENT || errno == ECONNREFUSED { return nil }
        throw VaultError(.io, "cannot connect to the vault agent at \(path): \(String(cString: strerror(errno)))")
    }

    /// The next connection (blocking); nil when interrupted or out of descriptors.
    func accept() -> UnixSocket? {
        let fd = Glibc.accept(self.fd, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)   // belt and braces: helpers are started with closefrom(3) anyway
        return UnixSocket(fd: fd)
    }

    /// The uid and pid of the process at the other end (`SO_PEERCRED`).
    func peer() -> (uid: uid_t, pid: pid_t)? {
        var uid: uid_t = 0, pid: pid_t = 0
        return CLinuxShims_peer_credentials(fd, &uid, &pid) == 0 ? (uid, pid) : nil
    }

    /// Writes every byte (looping over short writes and EINTR; never SIGPIPE).
    func writeAll(_ buf: UnsafeRawBufferPointer) throws {
        var off = 0
        while off < buf.count {
            let n = send(fd, buf.baseAddress! + off, buf.count - off, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                throw AgentWire.Closed()
            }
            off += n
        }
    }

    /// Fills `buf` completely. Waits up to `firstByteTimeout` for the first byte (nil: forever)
    /// and then `timeout` for the rest. Returns false at a clean end of stream before any byte.
    func readExactly(_ buf: UnsafeMutableRawBufferPointer, firstByteTimeout: TimeInterval?, timeout: TimeInterval) throws -> Bool {
        var off = 0
        while off < buf.count {
            let wait = off == 0 ? firstByteTimeout : timeout
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, wait.map { Int32(min($0 * 1000, Double(Int32.max))) } ?? -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw AgentWire.Closed()
            }
            if ready == 0 { throw AgentWire.TimedOut() }
            let n = recv(fd, buf.baseAddress! + off, buf.count - off, 0)
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw AgentWire.Closed()
            }
            if n == 0 {
                if off == 0 { return false }
                throw AgentWire.Closed()
            }
            off += n
        }
        return true
    }
}
