import Foundation

/// One JSON line per request on stderr: request id (`X-Request-Id`, the balancer's when it sent
/// one), instance, method, route pattern and path (never the query), status, bytes in and out,
/// milliseconds, user id. Tokens, passwords, names and query strings are never written.
struct AccessLog: Sendable {
    let enabled: Bool
    /// `--instance`, on every request line (several instances behind a balancer share one log).
    var instance = ""

    func record(_ ex: Exchange) {
        guard enabled else { return }
        let fields: [String: Any] = [
            "ts": Date().timeIntervalSince1970, "method": ex.method, "path": ex.path, "status": ex.status,
            "bytesIn": ex.bodyBytes, "bytesOut": ex.responseBytes,
            "ms": (ex.elapsedMillis * 10).rounded() / 10, "user": ex.userId ?? "-",
            "requestId": ex.requestId, "instance": instance, "route": ex.route ?? "-",
        ]
        guard var data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0a)
        FileHandle.standardError.write(data)
    }

    /// `--instance` for `message` lines (set once by `serve`; empty in the `user` commands).
    static let processInstance = Locked("")

    /// A free-form server message (startup, shutdown), also as JSON.
    static func message(_ text: String) {
        var fields: [String: Any] = ["ts": Date().timeIntervalSince1970, "msg": text]
        let instance = processInstance.withLock { $0 }
        if !instance.isEmpty { fields["instance"] = instance }
        guard var data = try? JSONSerialization.data(withJSONObject: fields,
                                                     options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0a)
        FileHandle.standardError.write(data)
    }
}
