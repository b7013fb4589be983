import Foundation
import VaultAPI
import VaultCore
import VaultHTTP

/// Sends a list of chunks over several connections at once (`vault sync --concurrency N`): each
/// worker thread owns its own `HTTPClient` and `SealedBytes` and takes the next chunk from a
/// shared queue. The first answer that is not a 308 (or a transport failure) stops the others
/// from starting new chunks and is handed back to the caller, which decides as for one chunk.
final class ParallelChunks: @unchecked Sendable {
    // SAFETY: every mutable field below is read and written only with `lock` held; the
    // per-worker clients and handles are each used by exactly one worker thread.

    /// How a batch ended.
    enum End {
        /// Every chunk answered 308.
        case allAccepted
        /// The upload completed (201).
        case completed(HTTPResponse)
        /// A status the caller must judge (404, 412, 422, 5xx…).
        case answered(HTTPResponse)
        case transport(HTTPError)
        case failed(Error)
        /// `stop()` was called: chunks in flight were cut off (the server keeps their prefix).
        case stopped
    }

    private let lock = NSLock()
    private var queue: [(Int64, Int64)]
    private var end: End?
    private var confirmed: Int64
    private var inFlight: [Int: Int64] = [:]
    private var accepted = 0
    private var stopped = false

    init(chunks: [(Int64, Int64)], confirmed: Int64) {
        self.queue = chunks.reversed()
        self.confirmed = confirmed
    }

    /// Bytes confirmed by the server plus bytes sent in chunks still in flight.
    var progress: Int64 { lock.withLock { confirmed + inFlight.values.reduce(0, +) } }
    /// Whether at least one chunk was accepted.
    var anyAccepted: Bool { lock.withLock { accepted > 0 } }

    /// Stops the batch now: no new chunk starts, and chunks in flight are cut off.
    func stop() {
        lock.withLock {
            stopped = true
            if end == nil { end = .stopped }
        }
    }

    private func next(worker: Int) -> (Int64, Int64)? {
        lock.withLock {
            guard end == nil, let c = queue.popLast() else { return nil }
            inFlight[worker] = 0
            return c
        }
    }

    private func finish(worker: Int, length: Int64, _ result: Result<HTTPResponse, Error>) {
        lock.withLock {
            inFlight[worker] = nil
            switch result {
            case .success(let r) where r.status == 308:
                confirmed += length; accepted += 1
            case .success(let r) where r.status == 201:
                if end == nil { end = .completed(r) }
            case .success(let r):
                if end == nil { end = .answered(r) }
            case .failure(let e as HTTPError):
                if end == nil { end = .transport(e) }
            case .failure(let e):
                if end == nil { end = .failed(e) }
            }
        }
    }

    /// Runs `workers` threads until the queue is empty or one of them hits an answer other
    /// than 308. `send(client, handle, start, length, onSent)` performs one chunk request.
    /// `tick` runs on the calling thread about three times a second while they work.
    func run(workers: [(HTTPClient, SealedBytes)],
             send: @escaping (HTTPClient, SealedBytes, Int64, Int64) throws -> HTTPResponse,
             tick: () -> Void) -> End {
        let group = DispatchGroup()
        let job = UncheckedJob(workers: workers, send: send)
        for index in workers.indices {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                let (client, handle) = job.workers[index]
                client.onProgress = { [self] sent, _ in
                    lock.withLock {
                        if inFlight[index] != nil { inFlight[index] = sent }
                        return !stopped
                    }
                }
                defer { client.onProgress = nil }
                while let (start, length) = next(worker: index) {
                    finish(worker: index, length: length, Result { try job.send(client, handle, start, length) })
                }
            }
            thread.start()
        }
        while group.wait(timeout: .now() + 0.3) == .timedOut { tick() }
        tick()
        return lock.withLock { end ?? .allAccepted }
    }
}

/// Carries each worker's own (non-Sendable) client and handle to its thread.
private struct UncheckedJob: @unchecked Sendable {
    // SAFETY: worker `i` is the only thread that touches `workers[i]`; `send` is called
    // concurrently only with distinct clients and handles.
    let workers: [(HTTPClient, SealedBytes)]
    let send: (HTTPClient, SealedBytes, Int64, Int64) throws -> HTTPResponse
}
