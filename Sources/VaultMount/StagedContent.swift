import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The content of a file being written through the mount, held in this process's memory only
/// (never on disk: docs/mount.md "Writing"), until it is committed as a sealed blob on close or
/// fsync. Every buffer it gives up is wiped first (growing, truncating, and when it is freed).
final class StagedContent {
    /// The most a file written through the mount may hold (EFBIG beyond).
    static let limit = 512 << 20

    private var buffer: UnsafeMutableRawPointer?
    private var capacity = 0
    private(set) var count = 0
    /// Changed since the last commit.
    var dirty = false
    /// Modification time as of the last change (seconds since the epoch).
    var modified: Int64

    init(modified: Int64) { self.modified = modified }

    deinit { release() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer, count: count) }

    /// Writes `data` at `offset` (a gap reads as zeros). Throws EFBIG past `limit`.
    func write(_ data: UnsafeRawBufferPointer, at offset: Int) throws(FuseErrno) {
        let end = offset + data.count
        try resize(max(count, end))
        if let base = data.baseAddress, data.count > 0 { (buffer! + offset).copyMemory(from: base, byteCount: data.count) }
        touch()
    }

    /// Sets the size: a cut wipes what it drops, a growth reads as zeros.
    func truncate(_ size: Int) throws(FuseErrno) {
        if size < count, let buffer { explicit_bzero(buffer + size, count - size) }
        if size < count { count = size } else { try resize(size) }
        touch()
    }

    private func touch() { dirty = true; modified = Int64(Date().timeIntervalSince1970) }

    private func resize(_ size: Int) throws(FuseErrno) {
        guard size <= Self.limit else { throw FuseErrno(EFBIG, "a file written through the mount is limited to \(Self.limit >> 20) MiB") }
        if size > capacity {
            let newCapacity = min(Self.limit, max(size, capacity * 2, 64 << 10))
            guard let grown = calloc(1, newCapacity) else { throw FuseErrno(ENOMEM, "out of memory for staged content") }
            if let buffer {
                grown.copyMemory(from: buffer, byteCount: count)
                explicit_bzero(buffer, capacity); free(buffer)
            }
            buffer = grown; capacity = newCapacity
        } else if size > count, let buffer {
            memset(buffer + count, 0, size - count)
        }
        count = size
    }

    /// Wipes and frees the memory.
    func release() {
        if let buffer { explicit_bzero(buffer, capacity); free(buffer) }
        buffer = nil; capacity = 0; count = 0
    }
}
