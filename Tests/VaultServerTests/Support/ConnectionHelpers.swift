import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Raw-connection helpers for the denial-of-service tests: kept-alive requests, streams,
/// clients that trickle bytes, and waiting for the server to close a connection.
extension HTTPTestClient {
    /// Sends one kept-alive request on `fd` and reads exactly its answer (head and
    /// `Content-Length` body), leaving the connection open.
    func keptAlive(_ fd: Int32, _ method: String, _ path: String, headers: [String: String] = [:],
                   timeout: TimeInterval = 10) throws -> TestResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        try writeAll(fd, Array((head + "\r\n").utf8))
        var got: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let split = Self.find(Array("\r\n\r\n".utf8), in: got) {
                let text = String(decoding: got[0..<split], as: UTF8.self).lowercased()
                let length = text.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if got.count >= split + 4 + length { return try Self.parse(Array(got[0..<(split + 4 + length)])) }
            }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65536, 0) }
            if n <= 0 { break }
            got += buf[0..<n]
        }
        throw TestHTTPError(description: "no complete kept-alive answer (\(got.count) bytes)")
    }

    /// Opens `GET /v1/events` with `token`; returns the socket once the stream has started, or
    /// nil with the status when the server answered otherwise (e.g. 429).
    func openStream(token: String, from source: String? = nil) throws -> (fd: Int32?, status: Int) {
        let fd = try connect(timeout: 10, from: source)
        try writeAll(fd, requestHead("GET", "/v1/events", headers: ["Authorization": "Bearer \(token)"], bodyLength: nil))
        var text = ""
        _ = read(fd, until: "\r\n\r\n", into: &text, timeout: 10)
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        guard status == 200 else { close(fd); return (nil, status) }
        guard read(fd, until: ": connected", into: &text, timeout: 10) else {
            close(fd); throw TestHTTPError(description: "the stream did not start: \(text)")
        }
        return (fd, 200)
    }

    /// Whether the server closes `fd` (EOF or reset) within `timeout`; bytes that arrive first
    /// are read and dropped.
    static func closedByServer(_ fd: Int32, within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buf = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) > 0 else { continue }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, Int32(MSG_DONTWAIT)) }
            if n == 0 { return true }
            if n < 0 && errno != EAGAIN && errno != EINTR { return true }
        }
        return false
    }

    /// Sends a complete request on a fresh connection from `source` and reports whether the
    /// server closed it without any answer (a refused connection).
    func refusedWithoutAnswer(from source: String? = nil) throws -> Bool {
        let fd = try connect(timeout: 10, from: source)
        defer { close(fd) }
        _ = try? writeAll(fd, requestHead("GET", "/v1/files", headers: [:], bodyLength: 0))
        let answer = (try? readAll(fd, deadline: Date().addingTimeInterval(10))) ?? []
        return answer.isEmpty
    }
}

/// A client that sends one byte to each of its sockets every `interval` seconds (a header line
/// that never ends), until stopped. Write errors (the server closed the socket) are ignored.
final class Trickler: @unchecked Sendable {
    // SAFETY: `fds` is immutable; `stopped` is only touched with `lock` held.
    private let fds: [Int32]
    private let lock = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(_ fds: [Int32], interval: TimeInterval) {
        self.fds = fds
        Thread { [self] in
            while !isStopped {
                for fd in fds { _ = send(fd, "a", 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                Thread.sleep(forTimeInterval: interval)   // the trickle's pace is the point (a slow client), no event to wait for
            }
            done.signal()
        }.start()
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    func stop() {
        lock.lock(); let first = !stopped; stopped = true; lock.unlock()
        if first { done.wait() }
    }
}

extension ServerProcess {
    /// `POST /v1/auth/token` from `source`; the whole answer.
    func login(_ user: String, _ password: String, from source: String? = nil) throws -> TestResponse {
        try client.send("POST", "/v1/auth/token", body: Array(#"{"username":"\#(user)","password":"\#(password)"}"#.utf8),
                        timeout: 30, from: source)
    }
}
