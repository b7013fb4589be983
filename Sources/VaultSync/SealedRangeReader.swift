import Foundation
import VaultCore

/// Feeds one byte range of an upload body: the staged blob's sealed bytes exactly as they are on
/// disk (read raw, never decrypted: nothing but ciphertext leaves the device), then zero bytes of
/// padding past the sealed size (SECURITY.md "Size padding").
final class SealedRangeReader {
    private let file: SealedBytes
    private var offset: UInt64
    private let end: UInt64

    init(file: SealedBytes, offset: UInt64, length: UInt64) {
        self.file = file; self.offset = offset; self.end = offset + length
    }

    /// Fills `dst` with the next bytes; 0 only at the end of the range.
    func read(into dst: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < end, dst.count > 0 else { return 0 }
        let want = Int(min(UInt64(dst.count), end - offset))
        var n = 0
        if offset < file.size {
            let fromFile = Int(min(UInt64(want), file.size - offset))
            n = try file.read(offset: offset, into: UnsafeMutableRawBufferPointer(rebasing: dst[0..<fromFile]))
            guard n == fromFile else {
                throw VaultError(.integrity, "blob \(file.id) is shorter than its recorded size", hint: "run `vault doctor`")
            }
        }
        if n < want {   // padding
            memset(dst.baseAddress! + n, 0, want - n)
            n = want
        }
        offset += UInt64(n)
        return n
    }
}
