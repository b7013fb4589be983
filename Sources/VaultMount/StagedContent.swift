import CLinuxShims
import Foundation
import VaultCore
import VaultCrypto
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The content of a file being written through the mount, until it is committed as a sealed
/// blob on close or fsync (docs/mount.md "Writing"). It lives on disk, never in plaintext: an
/// unnamed file (`O_TMPFILE`) in the vault's `tmp` folder holds it in segments of 64 KiB, each
/// sealed with AES-256-GCM under a random key that exists only in this process's locked memory,
/// so nothing of it can be read after the process ends, and no file is left behind. One segment
/// at a time is held in clear in locked memory (the window); every sealing of a segment uses a
/// new nonce (its index and how many times it was sealed), and a segment that does not open is
/// EIO. The memory a write needs does not grow with the file.
final class StagedContent {
    /// The most a file written through the mount may hold (EFBIG beyond).
    static let limit = 1 << 40
    static let segmentSize = 64 << 10
    private static let sealedSegmentSize = segmentSize + AESGCMKey.tagSize

    let file: POSIXFile   // internal: the tests alter it on disk
    private let key: AESGCMKey
    /// Per segment: how many times it has been sealed (0: never, reads as zeros).
    private var versions: [UInt32] = []
    /// The segment held in clear, its index, and whether it changed since it was last sealed.
    private let window = SecureBytes(count: segmentSize)
    private var windowIndex: Int?
    private var windowDirty = false
    /// Bytes past `count` read as zeros everywhere (in the window and in every sealed segment).
    private(set) var count = 0
    /// Changed since the last commit.
    var dirty = false
    /// Modification time as of the last change (seconds since the epoch).
    var modified: Int64
    /// While every write so far appended at the end of empty content, the bytes go straight
    /// into a sealed blob of the vault (`Vault.beginContent`), with nothing staged: the commit
    /// then publishes it as it is, instead of reading the staging back and sealing it again.
    /// Anything else (a write elsewhere, a read, a truncation) first spills it into the staging
    /// (`spill`). It holds the blob's own data key, never the vault's.
    private(set) var stream: BlobStream?

    /// Nothing was ever written here (a stream may start).
    var isPristine: Bool { stream == nil && count == 0 && versions.isEmpty && windowIndex == nil }

    /// A new, empty staging file in `folder` (the vault's `tmp`).
    init(folder: String, modified: Int64) throws(FuseErrno) {
        self.modified = modified
        do { key = try AESGCMKey(SecureBytes.random(count: 32)) } catch { throw FuseErrno(EIO, "no staging key: \(error)") }
        file = try Self.openUnnamed(in: folder)
    }

    /// An unnamed file in `folder`; where the filesystem has no `O_TMPFILE`, a named one that is
    /// unlinked at once.
    private static func openUnnamed(in folder: String) throws(FuseErrno) -> POSIXFile {
        let fd = CLinuxShims_open_unnamed(folder)
        if fd >= 0 { return POSIXFile(adopting: fd, path: folder + "/(unnamed staging)") }
        let path = folder + "/mount-staging-" + Hex.encode(SecureRandom.bytes(8))
        do {
            let f = try POSIXFile(path: path, flags: O_RDWR | O_CREAT | O_EXCL)
            unlink(path)
            return f
        } catch { throw FuseErrno(error.errno.rawValue, "no staging file in the vault's tmp folder: \(error.errno)") }
    }

    /// Makes `stream` where the writes go while they append (`isPristine` content only).
    func startStream(_ stream: BlobStream) {
        precondition(isPristine, "a stream starts on empty content")
        self.stream = stream
    }

    /// Writes what `source` delivers, piece by piece, from offset 0 (loading content to change
    /// it); returns the bytes written. A failure of the source comes through as it is.
    @discardableResult
    func fill(from source: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Int {
        var at = 0
        try source { piece in
            try write(piece, at: at)
            at += piece.count
        }
        return at
    }

    /// Moves what the stream holds (read back from its blob, each segment authenticated) into
    /// the staging, so that any write, read or cut may follow; the stream is dropped.
    func spill(from blob: BlobHandle) throws(FuseErrno) {
        try checkFailure()
        guard let st = stream else { return }
        defer { st.abandon() }
        stream = nil
        let (kept, wasDirty, time) = (count, dirty, modified)
        count = 0
        let read: Int
        do { read = try fill { try blob.stream($0) } } catch { throw FuseErrno(error, doing: "reading the streamed content back") }
        guard read == kept else { throw FuseErrno(EIO, "the streamed content read back \(read) of \(kept) bytes") }
        dirty = wasDirty; modified = time
    }

    /// Writes `data` at `offset` into the staging (a gap reads as zeros). Throws EFBIG past
    /// `limit`. Content that streams takes appends only, through `acceptAppend` and
    /// `sealAccepted` (the caller spills it first for any other write).
    func write(_ data: UnsafeRawBufferPointer, at offset: Int) throws(FuseErrno) {
        try checkFailure()
        guard stream == nil else { throw FuseErrno(EIO, "a staged write of streamed content") }
        let end = offset + data.count
        guard end <= Self.limit else { throw Self.tooLarge }
        var at = offset
        while at < end {
            let index = at / Self.segmentSize, within = at % Self.segmentSize
            let n = min(Self.segmentSize - within, end - at)
            try load(index)
            window.withUnsafeMutableBytes { w in
                (w.baseAddress! + within).copyMemory(from: data.baseAddress! + (at - offset), byteCount: n)
            }
            windowDirty = true
            at += n
        }
        count = max(count, end)
        touch()
    }

    /// A sealing of accepted bytes that failed (`sealAccepted`): every later operation on this
    /// content throws it, and the commit does too (the content is then dropped), as a file
    /// system reports a failed write-back at the next write, `fsync` or `close`.
    private(set) var failure: FuseErrno?

    /// Takes an append of `size` bytes at `offset` to the streamed content: the size and time
    /// change now, and the bytes are sealed by `sealAccepted`, which the mount calls once the
    /// kernel has its reply, so that the writing program prepares its next write while they
    /// seal. Throws what an append would (EFBIG, a failure before it, an offset that is not
    /// the end), having taken nothing.
    func acceptAppend(_ size: Int, at offset: Int) throws(FuseErrno) {
        try checkFailure()
        guard stream != nil else { throw FuseErrno(EIO, "an append to content that does not stream") }
        guard offset == count else { throw FuseErrno(EIO, "a write at \(offset) of content streamed to \(count)") }
        guard offset + size <= Self.limit else { throw Self.tooLarge }
        count = offset + size
        touch()
    }

    /// Seals the bytes of the last `acceptAppend` (exactly its size) into the stream; a failure
    /// is kept in `failure` (the stream then takes nothing more).
    func sealAccepted(_ data: UnsafeRawBufferPointer) {
        guard failure == nil, let st = stream else { return }
        do { try st.append(data) } catch {
            failure = FuseErrno(error, doing: "sealing written content")
            st.abandon(); stream = nil
        }
    }

    /// Throws the kept failure of a sealing, if any.
    func checkFailure() throws(FuseErrno) { if let failure { throw failure } }

    private static var tooLarge: FuseErrno { FuseErrno(EFBIG, "a file written through the mount is limited to \(limit >> 30) GiB") }

    /// Sets the size: a cut wipes what it drops, a growth reads as zeros.
    func truncate(_ size: Int) throws(FuseErrno) {
        try checkFailure()
        guard size <= Self.limit else { throw FuseErrno(EFBIG) }
        if let st = stream {
            guard size == 0 else { throw FuseErrno(EIO, "a cut of streamed content") }
            st.abandon(); stream = nil   // emptied: nothing of it is needed
            count = 0
            touch()
            return
        }
        if size < count {
            let kept = (size + Self.segmentSize - 1) / Self.segmentSize
            if let w = windowIndex, w >= kept { windowIndex = nil; windowDirty = false; wipeWindow() }
            if versions.count > kept { versions.removeSubrange(kept...) }
            do { try file.truncate(to: Int64(kept * Self.sealedSegmentSize)) } catch { throw Self.fuseError(error) }
            if size % Self.segmentSize != 0 {
                try load(size / Self.segmentSize)
                window.withUnsafeMutableBytes { w in
                    explicit_bzero(w.baseAddress! + size % Self.segmentSize, Self.segmentSize - size % Self.segmentSize)
                }
                windowDirty = true
            }
        }
        count = size
        touch()
    }

    /// Calls `body` with the bytes at `offset` (at most `size`, fewer at the end).
    func read(at offset: Int, size: Int, _ body: (UnsafeRawBufferPointer) -> Void) throws(FuseErrno) {
        try checkFailure()
        guard stream == nil else { throw FuseErrno(EIO, "a read of streamed content") }
        let start = min(offset, count), end = min(count, start + size)
        let out = SecureBytes(count: end - start)
        var at = start
        while at < end {
            let index = at / Self.segmentSize, within = at % Self.segmentSize
            let n = min(Self.segmentSize - within, end - at)
            try load(index)
            window.withUnsafeBytes { w in
                out.withUnsafeMutableBytes { o in (o.baseAddress! + (at - start)).copyMemory(from: w.baseAddress! + within, byteCount: n) }
            }
            at += n
        }
        out.withUnsafeBytes(body)
    }

    /// Calls `body` with the whole content in order, a segment at a time.
    func forEachSegment(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try checkFailure()
        guard stream == nil else { throw FuseErrno(EIO, "a staged read of streamed content") }
        var at = 0
        while at < count {
            let n = min(Self.segmentSize, count - at)
            try load(at / Self.segmentSize)
            try window.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            at += n
        }
    }

    private func touch() { dirty = true; modified = Int64(Date().timeIntervalSince1970) }

    private func wipeWindow() { window.withUnsafeMutableBytes { explicit_bzero($0.baseAddress!, $0.count) } }

    /// Makes segment `index` the window, sealing the window's segment first if it changed.
    private func load(_ index: Int) throws(FuseErrno) {
        if windowIndex == index { return }
        try sealWindow()
        windowIndex = nil
        let version = index < versions.count ? versions[index] : 0
        // The window still holds the previous segment's plaintext: wiped before anything can fail.
        wipeWindow()
        if version != 0 {
            var sealed = [UInt8](repeating: 0, count: Self.sealedSegmentSize)
            let got: Int
            do { got = try sealed.withUnsafeMutableBytes { try file.read(into: $0, at: Int64(index * Self.sealedSegmentSize)) } } catch {
                throw Self.fuseError(error)
            }
            guard got == sealed.count else { throw FuseErrno(EIO, "the staged content is cut short on disk") }
            do {
                _ = try sealed.withUnsafeBytes { s in
                    try window.withUnsafeMutableBytes { w in
                        try key.open(nonce: Self.nonce(index, version), ciphertextAndTag: s, aad: UnsafeRawBufferPointer(start: nil, count: 0), into: w)
                    }
                }
            } catch { throw FuseErrno(EIO, "the staged content was altered on disk") }
        }
        windowIndex = index
        windowDirty = false
    }

    /// Seals the window's segment into the file when it changed since it was last sealed.
    private func sealWindow() throws(FuseErrno) {
        guard let index = windowIndex, windowDirty else { return }
        if versions.count <= index { versions += [UInt32](repeating: 0, count: index + 1 - versions.count) }
        let version = versions[index] + 1
        var sealed = [UInt8](repeating: 0, count: Self.sealedSegmentSize)
        do {
            _ = try window.withUnsafeBytes { w in
                try sealed.withUnsafeMutableBytes { s in
                    try key.seal(nonce: Self.nonce(index, version), plaintext: w, aad: UnsafeRawBufferPointer(start: nil, count: 0), into: s)
                }
            }
        } catch { throw FuseErrno(EIO, "sealing staged content failed") }
        do { try sealed.withUnsafeBytes { try file.write($0, at: Int64(index * Self.sealedSegmentSize)) } } catch { throw Self.fuseError(error) }
        versions[index] = version
        windowDirty = false
    }

    /// The nonce of the `version`th sealing of segment `index`: never the same twice under the key.
    private static func nonce(_ index: Int, _ version: UInt32) -> [UInt8] {
        withUnsafeBytes(of: UInt64(index).bigEndian, Array.init) + withUnsafeBytes(of: version.bigEndian, Array.init)
    }

    private static func fuseError(_ error: any Error) -> FuseErrno {
        guard let e = error as? FileSystemError else { return FuseErrno(EIO, "staged content: \(error)") }
        return FuseErrno(e.errno.rawValue, "staged content: \(e.operation) failed (\(e.errno))")
    }

    /// Drops the content: the window is wiped and the file emptied (it goes when this is freed).
    func release() {
        stream?.abandon(); stream = nil
        wipeWindow()
        windowIndex = nil; windowDirty = false
        versions = []; count = 0
        try? file.truncate(to: 0)
    }
}
