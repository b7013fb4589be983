#if canImport(Glibc)
import Glibc
#endif

/// The prepared statements of one connection by SQL text, behind a mutex (a connection opened
/// `SQLITE_OPEN_FULLMUTEX` may be reached from more than one thread). A statement stays in the
/// cache while it is used, marked taken: a use costs one lookup, and the dictionary changes only
/// when a statement is first kept.
final class StatementCache {
    /// A cached statement and whether a caller holds it now.
    final class Slot {
        let statement: SQLStatement
        fileprivate var taken = false
        init(_ statement: SQLStatement) { self.statement = statement }
    }

    private var slots: [String: Slot] = [:]
    private var mutex = pthread_mutex_t()

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex); defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }

    /// The cached statement for `sql`, marked taken; nil when there is none or it is taken (a
    /// nested or concurrent use of the same text prepares its own).
    func take(_ sql: String) -> Slot? {
        locked {
            guard let slot = slots[sql], !slot.taken else { return nil }
            slot.taken = true
            return slot
        }
    }

    /// Gives back a slot from `take` (its statement reset by the caller).
    func release(_ slot: Slot) { locked { slot.taken = false } }

    /// Keeps `statement` (prepared for `sql`, reset) for later uses when there is none for its
    /// text yet and fewer than `limit` are kept; otherwise it is finalized as it goes.
    func keep(_ sql: String, _ statement: SQLStatement, limit: Int) {
        locked {
            if slots[sql] == nil, slots.count < limit { slots[sql] = Slot(statement) }
        }
    }

    /// Drops every statement (finalized as the last reference goes).
    func removeAll() { locked { slots.removeAll() } }

    var count: Int { locked { slots.count } }
}
