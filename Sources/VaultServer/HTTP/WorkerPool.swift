import Foundation

/// A fixed set of threads for request work that may block (disk writes and fsyncs, the
/// database, password hashing), so libmicrohttpd's few connection threads never wait on it.
/// Work is submitted through lanes: a lane runs its tasks in order, one at a time; different
/// lanes run in parallel. A lane with more tasks goes to the back of the queue after each one,
/// so one long upload cannot starve the others.
final class WorkerPool: @unchecked Sendable {
    // SAFETY: `ready`, `head` and `stopping` are only touched with `condition` held.
    private let condition = NSCondition()
    private var ready: [Lane] = []
    private var head = 0
    private var stopping = false
    private var threads: [Thread] = []
    private let finished = DispatchGroup()

    /// Starts `count` threads (at least one).
    init(threads count: Int) {
        for i in 0..<max(count, 1) {
            finished.enter()
            let t = Thread { [self] in loop(); finished.leave() }
            t.name = "vault-worker-\(i)"
            t.stackSize = 1 << 20
            threads.append(t)
            t.start()
        }
    }

    /// A new lane on this pool.
    func lane() -> Lane { Lane(pool: self) }

    /// Runs what is queued, then ends the threads and waits for them.
    func stop() {
        condition.lock(); stopping = true; condition.broadcast(); condition.unlock()
        finished.wait()
    }

    fileprivate func schedule(_ lane: Lane) {
        condition.lock()
        ready.append(lane)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while head == ready.count && !stopping { condition.wait() }
            if head == ready.count { condition.unlock(); return }
            let lane = ready[head]
            head += 1
            if head > 1024 && head * 2 > ready.count { ready.removeFirst(head); head = 0 }
            condition.unlock()
            lane.runOne()
        }
    }

    /// Tasks that must run in order (one exchange's begin, body pieces, finish, abandon).
    final class Lane: @unchecked Sendable {
        // SAFETY: `tasks` and `scheduled` are only touched with `lock` held; tasks run one at a
        // time because a lane is in the pool's queue at most once.
        private let lock = NSLock()
        private var tasks: [() -> Void] = []
        private var scheduled = false
        private unowned let pool: WorkerPool

        fileprivate init(pool: WorkerPool) { self.pool = pool }

        /// Queues `task` after the lane's earlier tasks.
        func run(_ task: @escaping () -> Void) {
            lock.lock()
            tasks.append(task)
            let schedule = !scheduled
            scheduled = true
            lock.unlock()
            if schedule { pool.schedule(self) }
        }

        fileprivate func runOne() {
            lock.lock()
            let task = tasks.isEmpty ? nil : tasks.removeFirst()
            lock.unlock()
            task?()
            lock.lock()
            let more = !tasks.isEmpty
            if !more { scheduled = false }
            lock.unlock()
            if more { pool.schedule(self) }
        }
    }
}
