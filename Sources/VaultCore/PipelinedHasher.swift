import Foundation
import VaultCrypto

/// SHA-256 on a second core, overlapped with the caller: pieces are copied into one of two
/// buffers, and a full buffer is hashed in the background while the caller fills the other
/// (at most one buffer in flight). For a reader that checks a file's checksum while it streams
/// it (`Vault.readWhole`): the caller never waits for the hash of its own piece.
///
/// The buffers hold plaintext: they are wiped before they are freed. One thread feeds it.
final class PipelinedHasher: @unchecked Sendable {
    // SAFETY: `hasher` is touched only by jobs on `queue` (serial) and, after `group.wait()`, by
    // `finalize`; a buffer is written only when no job reads it (the wait in `flush`).
    private var hasher = SHA256Hasher()
    private let buffers: [UnsafeMutableRawBufferPointer]
    private var current = 0
    private var used = 0
    private let group = DispatchGroup()
    private let queue = DispatchQueue(label: "vault.pipelined-hasher", qos: .userInitiated)

    init(bufferSize: Int = 1 << 20) {
        buffers = (0..<2).map { _ in .allocate(byteCount: bufferSize, alignment: 64) }
    }

    deinit {
        group.wait()
        for b in buffers {
            b.initializeMemory(as: UInt8.self, repeating: 0)
            b.deallocate()
        }
    }

    /// Adds `piece` (copied; the caller may reuse its buffer at once).
    func update(_ piece: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < piece.count {
            let n = min(piece.count - offset, buffers[current].count - used)
            (buffers[current].baseAddress! + used).copyMemory(from: piece.baseAddress! + offset, byteCount: n)
            used += n
            offset += n
            if used == buffers[current].count { flush() }
        }
    }

    /// The digest of everything added.
    func finalize() -> [UInt8] {
        flush()
        group.wait()
        return hasher.finalize()
    }

    /// Hands the current buffer to the background job, once the previous one is done with the other.
    private func flush() {
        guard used > 0 else { return }
        group.wait()
        let full = UncheckedSendable(UnsafeRawBufferPointer(rebasing: buffers[current][..<used]))
        group.enter()
        queue.async { [self] in
            hasher.update(full.value)
            group.leave()
        }
        current ^= 1
        used = 0
    }
}
