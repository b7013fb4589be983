#if canImport(Glibc)
import Glibc
#endif

/// The prepared statements of one connection by SQL text, behind a mutex (a connection opened
/// `SQLITE_OPEN_FULLMUTEX` may be reached from more than one thread).
final class StatementCache {
    private var statements: [String: SQLStatement] = [:]
    private var mutex = pthread_mutex_t()

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    /// Runs `body` on the dictionary under the mutex.
    func withLock<R>(_ body: (inout [String: SQLStatement]) throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex); defer { pthread_mutex_unlock(&mutex) }
        return try body(&statements)
    }
}
