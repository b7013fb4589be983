import Foundation

/// Reads a started child's standard output and standard error to their ends at the same time, so
/// a large output on one never blocks the child while the other is read.
public func readToEnd(stdout out: Pipe, stderr err: Pipe) -> (stdout: Data, stderr: Data) {
    let errData = LockedData()
    let group = DispatchGroup()
    group.enter()
    let errHandle = err.fileHandleForReading
    DispatchQueue.global().async { errData.set(errHandle.readDataToEndOfFile()); group.leave() }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    return (outData, errData.get())
}

/// A shell command of a test that exited with a status other than 0.
public struct ShellCommandFailed: Error, CustomStringConvertible {
    public let command: String
    public let status: Int32
    public var description: String { "command failed (exit \(status)): \(command)" }
}

/// Runs `/bin/sh -c command` (its standard error discarded) and returns its standard output;
/// throws `ShellCommandFailed` when it exits with a status other than 0.
@discardableResult
public func shell(_ command: String) throws -> String {
    let r = try toolOutput("/bin/sh", ["-c", command])
    guard r.status == 0 else { throw ShellCommandFailed(command: command, status: r.status) }
    return r.output
}

/// Bytes handed from the reading thread to the waiting one.
private final class LockedData: @unchecked Sendable {
    private var data = Data()
    private let lock = NSLock()
    func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
