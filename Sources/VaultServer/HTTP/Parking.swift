import Foundation
internal import CMicroHTTPD

/// Where one connection waits, and who may wake it. In pool mode a waiting connection is
/// suspended in libmicrohttpd (`MHD_suspend_connection`), so its thread serves others; in
/// thread-per-connection mode only streams wait, by blocking their own thread.
///
/// Every decision to sleep and every wake-up happens under one lock, so a wake-up that comes
/// between "nothing to do" and "sleep" is never lost.
final class Parking: @unchecked Sendable {
    /// Why a suspended connection waits; only the matching event resumes it.
    enum Reason { case work, backpressure, stream }

    // SAFETY: every field is only touched with `condition` held; `connection` is immutable and
    // only passed to libmicrohttpd while the connection is known to be open (parked).
    private let condition = NSCondition()
    private let connection: OpaquePointer
    /// Pool mode: waiting suspends the connection; else it blocks the thread.
    let suspends: Bool
    private var parked: Reason?
    private var signalled = false
    private var body: [UInt8] = []
    private var draining = false
    private var ready: HTTPResponse?
    /// Suspensions now in force across all connections (shutdown waits for zero).
    private let census: ParkingCensus

    init(connection: OpaquePointer, suspends: Bool, census: ParkingCensus) {
        self.connection = connection; self.suspends = suspends; self.census = census
    }

    // MARK: Work (pool mode; call park on the connection's thread, inside a callback)

    /// Suspends until `unparkWork()` or `finished(with:)`; false (nothing suspended) once
    /// the server is shutting down, when the caller does the work itself.
    func parkForWork() -> Bool {
        condition.lock(); defer { condition.unlock() }
        return suspend(.work)
    }

    /// Ends a `.work` wait.
    func unparkWork() {
        condition.lock(); defer { condition.unlock() }
        resume(if: .work)
    }

    /// Stores the response computed off the connection's thread and ends the wait.
    func finished(with response: HTTPResponse) {
        condition.lock(); defer { condition.unlock() }
        ready = response
        resume(if: .work)
    }

    /// The stored response, once.
    func takeReady() -> HTTPResponse? {
        condition.lock(); defer { condition.unlock() }
        defer { ready = nil }
        return ready
    }

    // MARK: Body pieces (pool mode)

    /// Adds a body piece for the worker. Returns true when the caller must queue a drain task
    /// (none is queued or running). Suspends reading while more than `high` bytes wait.
    func queue(_ piece: UnsafeRawBufferPointer, high: Int) -> Bool {
        condition.lock(); defer { condition.unlock() }
        body.append(contentsOf: piece)
        let schedule = !draining
        draining = true
        if body.count > high && parked == nil { _ = suspend(.backpressure) }
        return schedule
    }

    /// Everything queued so far (the worker writes it in one go); empty when nothing is left,
    /// and then the next `queue` asks for a new drain task. Resumes reading once the queue is
    /// taken.
    func takeBody() -> [UInt8] {
        condition.lock(); defer { condition.unlock() }
        if body.isEmpty { draining = false; return [] }
        let out = body
        body = []
        resume(if: .backpressure)
        return out
    }

    // MARK: Streams (both modes)

    /// Call before asking a stream for data: forgets earlier wake-ups.
    func arm() {
        condition.lock(); signalled = false; condition.unlock()
    }

    /// The stream has something (or ended): wakes its reader.
    func signal() {
        condition.lock(); defer { condition.unlock() }
        signalled = true
        if suspends { resume(if: .stream) } else { condition.broadcast() }
    }

    /// After a stream had nothing: returns true when the connection is now suspended (pool
    /// mode; the reader returns 0), false when the reader should ask again (a wake-up came, or
    /// in thread mode after blocking until one does).
    func waitForSignal() -> Bool {
        condition.lock(); defer { condition.unlock() }
        if signalled { return false }
        if suspends { return suspend(.stream) }
        while !signalled { condition.wait() }
        return false
    }

    // MARK: -

    private func suspend(_ reason: Reason) -> Bool {
        guard census.admit() else { return false }
        parked = reason
        MHD_suspend_connection(connection)
        return true
    }

    private func resume(if reason: Reason) {
        guard parked == reason else { return }
        parked = nil
        MHD_resume_connection(connection)
        census.release()
    }
}

/// How many connections are suspended right now. libmicrohttpd must not be stopped while any
/// is (`MHD_stop_daemon` aborts), so shutdown closes the census (no new suspensions), then
/// waits for zero.
final class ParkingCensus: @unchecked Sendable {
    // SAFETY: guarded by `condition`.
    private let condition = NSCondition()
    private var count = 0
    private var closed = false

    /// Counts one more suspension; false once closed.
    func admit() -> Bool {
        condition.lock(); defer { condition.unlock() }
        guard !closed else { return false }
        count += 1
        return true
    }

    func release() {
        condition.lock(); count -= 1; if count == 0 { condition.broadcast() }; condition.unlock()
    }

    /// Refuses new suspensions, then waits until none is left, at most `timeout` seconds;
    /// returns whether none is left.
    func closeAndDrain(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock(); defer { condition.unlock() }
        closed = true
        while count > 0 { if !condition.wait(until: deadline) { return count == 0 } }
        return true
    }
}
