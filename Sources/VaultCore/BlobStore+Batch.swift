import Foundation
import VaultCrypto
import VaultPrimitives

extension BlobStore {
    /// What sealing one file of a batch came to.
    enum BatchResult {
        case sealed(BlobRecord)
        /// The source could not be imported (it vanished, is unreadable, or changed while read).
        case skipped(VaultError)
        /// (Inside the batch: a result the caller has taken.)
        case taken
    }

    /// The threads a batch seals on: every core, up to 4 (a file's reading, sealing and writing
    /// on one overlaps another's on the next; the folder's own operations take turns in the kernel).
    static var batchWorkers: Int { min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4) }

    /// Starts sealing each regular file of `paths` into a new blob in `area`, `workers` at a
    /// time on other threads, without fsync (the caller makes the batch durable with `syncAll()`
    /// before publishing anything that names it). The caller takes the results in the order of
    /// `paths` (`SealingBatch.next`) as they come, and so can record each while later ones are
    /// sealed. The blobs' ids are drawn at once and given out in ascending order (`ascendingIds`).
    func beginBatch(_ paths: [String], area: BlobArea, workers: Int = batchWorkers) -> SealingBatch {
        let batch = SealingBatch(count: paths.count)
        let ids = Self.ascendingIds(paths.count)
        let shared = UncheckedSendable((store: self, paths: paths, ids: ids))
        for _ in 0..<max(1, min(workers, paths.count)) {
            DispatchQueue.global(qos: .userInitiated).async(group: batch.workers) {
                let (store, paths, ids) = shared.value
                while let i = batch.take() {
                    let outcome: Result<BatchResult, Error>
                    do {
                        let source: SourceFile
                        do { source = try SourceFile(regularFileAt: paths[i]) } catch let e as VaultError {
                            throw SourceProblem(e)   // it vanished, became unreadable or not a file since the scan
                        }
                        outcome = .success(.sealed(try store.importFile(source, area: area, durable: false, checkSpace: false,
                                                                         id: ids[i])))
                    } catch let p as SourceProblem {
                        outcome = .success(.skipped(p.error))
                    } catch {
                        outcome = .failure(error)
                    }
                    batch.put(i, outcome)
                }
            }
        }
        return batch
    }

    /// `count` ids of 16 random bytes, in ascending order. A batch whose rows are inserted in the
    /// order of their ids appends to each index on an id instead of touching a random page of it
    /// per row (at 100,000 files, the difference between a cache that holds the work and one that
    /// spills to disk and reads back). Each id is as random as one drawn alone; only their order
    /// within the batch follows the order of its files.
    static func ascendingIds(_ count: Int) -> [[UInt8]] {
        let all = SecureRandom.bytes(16 * count)
        return stride(from: 0, to: 16 * count, by: 16).map { Array(all[$0..<$0 + 16]) }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }
}

/// Files being sealed on other threads (`BlobStore.beginBatch`), their results taken in order.
/// After a failure, or once the caller gives up (`stop`), no file is started any more.
final class SealingBatch: @unchecked Sendable {
    fileprivate let workers = DispatchGroup()
    private let condition = NSCondition()
    private var nextToStart = 0
    private var nextToTake = 0
    private var outcomes: [Result<BlobStore.BatchResult, Error>?]
    private var stopped = false

    fileprivate init(count: Int) { outcomes = Array(repeating: nil, count: count) }

    /// The next file for a worker, or nil when all are started or the batch stopped.
    fileprivate func take() -> Int? {
        condition.lock(); defer { condition.unlock() }
        guard !stopped, nextToStart < outcomes.count else { return nil }
        nextToStart += 1
        return nextToStart - 1
    }

    fileprivate func put(_ i: Int, _ outcome: Result<BlobStore.BatchResult, Error>) {
        condition.lock(); defer { condition.unlock() }
        outcomes[i] = outcome
        if case .failure = outcome { stopped = true }
        condition.broadcast()
    }

    /// The result of the next file in order, waiting for it; nil after the last. A failure of
    /// the vault (no space, an unwritable folder) stops the batch and is thrown here, in the
    /// order of the files; `stop` then yields the blobs to remove.
    func next() throws -> BlobStore.BatchResult? {
        condition.lock(); defer { condition.unlock() }
        guard nextToTake < outcomes.count else { return nil }
        while outcomes[nextToTake] == nil {
            if stopped && nextToTake >= nextToStart { throw VaultError(.internalError, "the sealing batch stopped before this file") }
            condition.wait()
        }
        let outcome = outcomes[nextToTake]!
        outcomes[nextToTake] = .success(.taken)   // the caller holds it now
        nextToTake += 1
        return try outcome.get()
    }

    /// Starts no more files, waits for those being sealed, and returns every blob the batch
    /// sealed that was not taken (for a caller that gives up to remove, with those it took).
    func stop() -> [BlobRecord] {
        condition.lock(); stopped = true; condition.unlock()
        workers.wait()
        condition.lock(); defer { condition.unlock() }
        return outcomes.compactMap { if case .success(.sealed(let b))? = $0 { return b } else { return nil } }
    }
}
