import Foundation
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Parses the authenticated plaintext of a bundle (BundleBody) as it streams out of the sealed
/// reader, in pieces of any size, writing each entry's bytes to a 0600 file under `directory`.
/// Fixed fields (which include the master key) are gathered in locked, wiped memory.
final class BundleBodyParser {
    private enum Step { case header, pathLength, path(Int), size, data(UInt64), done }

    let directory: String
    private var step = Step.header
    private let field = SecureBytes(count: 256)
    private var have = 0
    private(set) var vaultId: [UInt8] = []
    private(set) var masterKey: SecureBytes?
    private var expected = 0
    private(set) var entries: [(path: String, size: UInt64)] = []
    private var seen = Set<String>()
    private var currentPath = ""
    private var fd: Int32 = -1

    init(directory: String) { self.directory = directory }

    deinit { if fd >= 0 { close(fd) } }

    private func damaged(_ what: String) -> VaultError {
        VaultError(.integrity, "the bundle's contents are malformed (\(what))", hint: "nothing was imported")
    }

    private func fieldSize(_ s: Step) -> Int {
        switch s {
        case .header: return BundleBody.headerSize
        case .pathLength: return 2
        case .path(let n): return n
        case .size: return 8
        case .data, .done: return 0
        }
    }

    /// Feeds the next piece of plaintext.
    func consume(_ buf: UnsafeRawBufferPointer) throws {
        var off = 0
        while off < buf.count {
            switch step {
            case .done:
                throw damaged("bytes after the last entry")
            case .data(let remaining):
                let n = Int(min(remaining, UInt64(buf.count - off)))
                try POSIX.writeAll(fd: fd, UnsafeRawBufferPointer(rebasing: buf[off..<off + n]), path: directory + "/" + currentPath)
                off += n
                if remaining - UInt64(n) == 0 { try endEntry() } else { step = .data(remaining - UInt64(n)) }
            default:
                let need = fieldSize(step)
                let n = min(need - have, buf.count - off)
                field.withUnsafeMutableBytes { f in
                    (f.baseAddress! + have).copyMemory(from: buf.baseAddress! + off, byteCount: n)
                }
                have += n; off += n
                if have == need { have = 0; try handleField() }
            }
        }
    }

    /// Throws unless exactly the announced entries arrived, with the keyslots and database among them.
    func finish() throws {
        guard case .done = step else {
            throw damaged("it ends after \(entries.count) of \(expected) entries")
        }
        guard seen.contains("keyslots"), seen.contains("metadata.db") else { throw damaged("no keyslot file or database") }
    }

    private func bytes(_ range: Range<Int>) -> [UInt8] { field.withUnsafeBytes { Array($0[range]) } }

    private func integer(_ range: Range<Int>) -> UInt64 { bytes(range).reduce(0) { $0 << 8 | UInt64($1) } }

    private func handleField() throws {
        switch step {
        case .header:
            guard bytes(0..<8) == BundleBody.magic else { throw damaged("bad body magic") }
            guard bytes(8..<12) == [1, 0, 0, 0] else { throw damaged("unsupported body version") }
            vaultId = bytes(12..<28)
            masterKey = field.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[28..<60])) }
            expected = Int(integer(60..<64))
            guard expected >= 2 else { throw damaged("too few entries") }
            step = .pathLength
        case .pathLength:
            let n = Int(integer(0..<2))
            guard (1...BundleBody.maxPathLength).contains(n) else { throw damaged("path length \(n)") }
            step = .path(n)
        case .path(let n):
            let p = String(decoding: bytes(0..<n), as: UTF8.self)
            guard BundleBody.isAllowed(p) else { throw damaged("unexpected path '\(p)'") }
            guard seen.insert(p).inserted else { throw damaged("'\(p)' appears twice") }
            currentPath = p
            step = .size
        case .size:
            let size = integer(0..<8)
            let path = directory + "/" + currentPath
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw POSIX.mapWriteError(errno, path: path) }
            entries.append((currentPath, size))
            if size == 0 { try endEntry() } else { step = .data(size) }
        case .data, .done:
            break
        }
    }

    private func endEntry() throws {
        let path = directory + "/" + currentPath
        if fsync(fd) != 0 { throw POSIX.mapWriteError(errno, path: path) }
        close(fd); fd = -1
        step = entries.count == expected ? .done : .pathLength
    }
}
