import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The organisation's key files (SECURITY.md "Organisation key files"): what `vault admin keygen`
/// writes and what `--org-key`, `--signing-key` and the policy's signing key are read from.
///
/// A key file is the key in hex and one `\n`, mode 0600, created new (never over an existing
/// file). A reader takes hex digits of either case, with only whitespace around them, or exactly
/// the key's raw bytes; anything else is refused. Buffers that held the key are wiped.
public enum OrgKeyFile {
    /// The longest key file read (a key of 64 bytes is 129 bytes of text).
    static let maxBytes = 4096

    /// The key of `count` bytes in the file at `path` (a regular file or a pipe).
    public static func read(_ path: String, count: Int, what: String) throws -> SecureBytes {
        let file = try SourceFile(path, accepting: [.regular, .pipe], what: "the key file")
        // One fixed buffer, read into in place and wiped: no copy of the key is left behind.
        var data = [UInt8](repeating: 0, count: maxBytes + 1)
        defer { wipe(&data) }
        var used = 0
        while used < data.count {
            let n = try data.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[used...])) }
            if n == 0 { break }
            used += n
        }
        guard used <= maxBytes else {
            throw VaultError(.usage, "\(DisplayText.escaped(path)) is larger than \(maxBytes) bytes; it is not a key file")
        }
        if let key = decode(data[0..<used], count: count) { return key }
        throw VaultError(.usage, "\(DisplayText.escaped(path)) does not hold a \(what) (\(count) bytes: \(2 * count) hex digits, or the raw bytes)")
    }

    /// The key in `data`: `2 × count` hex digits with only whitespace around them, or exactly
    /// `count` raw bytes; nil for anything else.
    static func decode(_ data: ArraySlice<UInt8>, count: Int) -> SecureBytes? {
        let isSpace: (UInt8) -> Bool = { $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }
        let start = data.firstIndex { !isSpace($0) } ?? data.endIndex
        let end = (data.lastIndex { !isSpace($0) }).map { $0 + 1 } ?? start
        if end - start == 2 * count {
            let key = SecureBytes(count: count)
            var valid = true
            key.withUnsafeMutableBytes { out in
                data[start..<end].withUnsafeBytes { valid = Hex.decode($0, into: out) }
            }
            if valid { return key }
        }
        return data.count == count ? SecureBytes(copying: data) : nil
    }

    /// Writes `key` as lowercase hex and `\n` to a new 0600 file at `path` (an existing file is
    /// refused, never overwritten), fsynced.
    public static func write(_ key: SecureBytes, to path: String) throws {
        var text = [UInt8](repeating: 10, count: key.count * 2 + 1)
        key.withUnsafeBytes { raw in text.withUnsafeMutableBytes { Hex.encode(raw, into: $0) } }
        defer { wipe(&text) }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw VaultError(.alreadyExists, "\(DisplayText.escaped(path)) exists; refusing to overwrite a key") }
            throw VaultError(.io, "cannot write \(DisplayText.escaped(path)): \(POSIX.errnoMessage())")
        }
        defer { close(fd) }
        try POSIX.writeAll(fd: fd, text, path: path)
        if fsync(fd) != 0 { throw POSIX.mapWriteError(errno, path: path) }
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        bytes.wipe()
    }
}
