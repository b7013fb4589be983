import Foundation

/// Waiting for an event (a process ready, a file written, a state reached) instead of for a
/// fixed time: the one polling loop of the tests. The timeout is a generous bound that detects a
/// hang, never a speed figure (a speed figure belongs in a benchmark).
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let timeout: TimeInterval
    public var description: String { "timed out after \(timeout) s waiting for \(what)" }
}

/// Whether `condition` came to hold within `timeout`. Polls often at first (1 ms), then less
/// (up to every 50 ms), so a quick event is seen at once and a slow one costs little CPU. An
/// error thrown by `condition` (say, the process being waited for died) ends the wait.
public func eventually(within timeout: TimeInterval = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var pause: TimeInterval = 0.001
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: pause)   // the one polling pause of the tests
        pause = min(pause * 2, 0.05)
    }
    return try condition()
}

/// Waits until `condition` holds; throws `WaitTimedOut` naming `what` if it does not within
/// `timeout`.
public func waitUntil(_ what: String, timeout: TimeInterval = 30, _ condition: () throws -> Bool) throws {
    guard try eventually(within: timeout, condition) else { throw WaitTimedOut(what: what, timeout: timeout) }
}

/// A server's readiness signal: reads its standard output up to the first line break (or its
/// end) and returns the port of its "listening on 127.0.0.1:PORT" line, nil if it printed none,
/// with what it printed. Blocks until the line comes (a server that hangs leaves its test's
/// overall bound to catch it).
public func listeningPort(from output: FileHandle) -> (port: UInt16?, line: String) {
    var line = ""
    while !line.contains("\n") {
        let d = output.availableData
        if d.isEmpty { break }
        line += String(decoding: d, as: UTF8.self)
    }
    guard let r = line.range(of: "listening on 127.0.0.1:") else { return (nil, line) }
    return (UInt16(line[r.upperBound...].prefix { $0.isNumber }), line)
}
