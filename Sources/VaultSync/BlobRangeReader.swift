import Foundation
import VaultCore

/// Feeds one byte range of a sealed blob to an upload body: authenticated plaintext read through
/// `BlobHandle` in 1 MiB pieces (so each sealed segment is opened once), held only in memory and
/// wiped when done. Nothing is written to disk.
final class BlobRangeReader {
    private let handle: BlobHandle
    private var offset: UInt64
    private let end: UInt64
    private var buffer: [UInt8] = []
    private var position = 0

    init(handle: BlobHandle, offset: UInt64, length: UInt64) {
        self.handle = handle; self.offset = offset; self.end = offset + length
    }

    deinit { wipe() }

    /// Fills `dst` with the next bytes; 0 only at the end of the range.
    func read(into dst: UnsafeMutableRawBufferPointer) throws -> Int {
        if position == buffer.count {
            wipe()
            guard offset < end else { return 0 }
            let n = Int(min(UInt64(1 << 20), end - offset))
            buffer = try handle.read(offset: offset, count: n)
            guard buffer.count == n else {
                throw VaultError(.integrity, "blob \(handle.id) is shorter than its recorded size", hint: "run `vault doctor`")
            }
            offset += UInt64(n)
            position = 0
        }
        let n = min(dst.count, buffer.count - position)
        buffer.withUnsafeBytes { src in
            dst.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }

    private func wipe() {
        buffer.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { memset(base, 0, raw.count) }
        }
        buffer = []
        position = 0
    }
}
