import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response as the tests see it.
struct TestResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers[name.lowercased()] }
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
}

struct TestHTTPError: Error, CustomStringConvertible {
    let description: String
    /// The errno of a failed socket call, when that is what failed.
    var errno: Int32? = nil
}

/// A tiny HTTP/1.1 client over a raw loopback socket (one request per connection).
struct HTTPTestClient {
    let port: UInt16

    /// Sends one request and reads the whole answer (from source address `from`, any of
    /// 127.0.0.0/8, when given).
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [],
              timeout: TimeInterval = 30, from source: String? = nil) throws -> TestResponse {
        let fd = try connect(timeout: timeout, from: source)
        defer { close(fd) }
        return try exchange(fd, requestHead(method, path, headers: headers, bodyLength: body.count) + body, timeout: timeout)
    }

    /// Sends `bytes` as they are (a request head that no `String` could hold) and reads the answer.
    func sendRaw(_ bytes: [UInt8], timeout: TimeInterval = 30) throws -> TestResponse {
        let fd = try connect(timeout: timeout)
        defer { close(fd) }
        return try exchange(fd, bytes, timeout: timeout)
    }

    /// Writes the request and reads the answer. A server may answer before the body is read (413
    /// on a body over the cap) and close: the write then fails with EPIPE or ECONNRESET, as it
    /// does for curl, and the answer already sent is what counts.
    private func exchange(_ fd: Int32, _ bytes: [UInt8], timeout: TimeInterval) throws -> TestResponse {
        do {
            try writeAll(fd, bytes)
        } catch let error as TestHTTPError {
            guard error.errno == EPIPE || error.errno == ECONNRESET else { throw error }
            let answered = (try? readAll(fd, deadline: Date().addingTimeInterval(timeout))) ?? []
            guard !answered.isEmpty else { throw error }
            return try Self.parse(answered)
        }
        return try Self.parse(readAll(fd, deadline: Date().addingTimeInterval(timeout)))
    }

    func requestHead(_ method: String, _ path: String, headers: [String: String], bodyLength: Int?) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let bodyLength, headers["Content-Length"] == nil { head += "Content-Length: \(bodyLength)\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }

    /// A connected socket with a receive timeout, bound to `source` (e.g. "127.0.0.2": all of
    /// 127.0.0.0/8 is this machine) when given, so tests can be several clients.
    func connect(timeout: TimeInterval = 30, from source: String? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPError(description: "socket failed") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let rc = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else { close(fd); throw TestHTTPError(description: "bind to \(source) failed: errno \(errno)") }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw TestHTTPError(description: "connect to \(port) failed: errno \(errno)") }
        return fd
    }

    func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw TestHTTPError(description: "send failed: errno \(Glibc.errno)", errno: Glibc.errno) }
            done += n
        }
    }

    /// Reads until the peer closes; gives up at `deadline` (keep-alive streams never close).
    func readAll(_ fd: Int32, deadline: Date = .distantFuture) throws -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            if Date() > deadline { throw TestHTTPError(description: "no end of response before the deadline") }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65536, 0) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET && !out.isEmpty { break }
                throw TestHTTPError(description: "recv failed: errno \(errno) after \(out.count) bytes")
            }
            out.append(contentsOf: buf[0..<n])
        }
        return out
    }

    /// Reads from `fd` until `marker` appears in the accumulated text or the timeout passes.
    func read(_ fd: Int32, until marker: String, into acc: inout String, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buf = [UInt8](repeating: 0, count: 4096)
        while !acc.contains(marker) {
            if Date() > deadline { return false }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) > 0 else { continue }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, 0) }
            if n <= 0 { return acc.contains(marker) }
            acc += String(decoding: buf[0..<n], as: UTF8.self)
        }
        return true
    }

    static func parse(_ raw: [UInt8]) throws -> TestResponse {
        var data = raw
        while true {
            guard let split = find(Array("\r\n\r\n".utf8), in: data) else {
                throw TestHTTPError(description: "no HTTP head in \(data.count) bytes")
            }
            let head = String(decoding: data[0..<split], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                throw TestHTTPError(description: "bad status line")
            }
            var headers: [String: String] = [:]
            for l in lines {
                guard let c = l.firstIndex(of: ":") else { continue }
                headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
            }
            var body = Array(data[(split + 4)...])
            if status == 100 { data = body; continue }
            if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
            else if let len = headers["content-length"].flatMap(Int.init), body.count > len { body = Array(body[0..<len]) }
            return TestResponse(status: status, headers: headers, body: body)
        }
    }

    static func dechunk(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], i = 0
        while let lineEnd = find(Array("\r\n".utf8), in: Array(b[i...])) {
            let sizeText = String(decoding: b[i..<(i + lineEnd)], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16), size > 0 else { break }
            let start = i + lineEnd + 2
            guard start + size <= b.count else { out += b[start...]; break }
            out += b[start..<(start + size)]
            i = start + size + 2
            if i >= b.count { break }
        }
        return out
    }

    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] {
            if Array(hay[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}
