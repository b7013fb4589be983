#if canImport(Glibc)
internal import Glibc
import VaultPrimitives
#endif
/// Streams plaintext into the sealed blob format in constant memory: one plaintext segment is
/// buffered, and sealed segments are batched into writes of about 256 KiB. The caller owns the
/// sink (the vault layer does temp file + fsync + rename). The header is the first thing written.
///
/// A fresh random data key is drawn per blob, so (key, nonce) pairs never repeat. After any error
/// (from the sink or from sealing) the writer refuses further use; discard the partial output.
public final class SealedBlobWriter {
    private enum State { case open, finished, failed }

    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private let segments: SegmentCrypto
    private let segmentSize: Int
    private let blobIdHex: String
    /// One segment of plaintext waiting to be sealed (it may turn out to be the final one).
    private let plaintext: UnsafeMutableRawBufferPointer
    private var buffered = 0
    /// How far into `plaintext` any byte was ever put (what a wipe must zero).
    private var dirty = 0
    /// Sealed output waiting for the sink: header first, then whole segments.
    private let output: UnsafeMutableRawBufferPointer
    private var pending = 0
    private var segmentIndex: UInt64
    private var total: UInt64
    private var hasher: SHA256Hasher
    private let computeChecksum: Bool
    private var state = State.open

    /// SHA-256 of all plaintext, available after `finish()` (the whole-file checksum); nil when
    /// the writer was made with `computeChecksum: false` (the caller hashes elsewhere, e.g. in parallel).
    public private(set) var plaintextSHA256: [UInt8]?

    /// `sizeHint`: the plaintext size expected, when known; a small blob then gets buffers its
    /// size, not a segment's and 256 KiB (it may still grow past the hint).
    public convenience init(vaultId: [UInt8], blobId: [UInt8], keyEpoch: UInt32, wrapKey: SecureBytes,
                            segmentSize: Int = SealedBlobHeader.defaultSegmentSize, computeChecksum: Bool = true,
                            sizeHint: UInt64? = nil, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        let dataKey = SecureBytes.random(count: AESGCMKey.keySize)
        let header = try SealedBlobHeader(segmentSize: segmentSize, vaultId: vaultId, blobId: blobId,
                                          keyEpoch: keyEpoch, dataKey: dataKey, wrapKey: wrapKey)
        try self.init(header: header, dataKey: dataKey, computeChecksum: computeChecksum, emitHeader: true,
                      startIndex: 0, total: 0, hasher: SHA256Hasher(), sizeHint: sizeHint, sink: sink)
    }

    private init(header: SealedBlobHeader, dataKey: SecureBytes, computeChecksum: Bool, emitHeader: Bool,
                 startIndex: UInt64, total: UInt64, hasher: SHA256Hasher, sizeHint: UInt64? = nil,
                 sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        self.computeChecksum = computeChecksum
        segments = try SegmentCrypto(dataKey: dataKey, header: header)
        self.sink = sink
        self.segmentSize = header.segmentSize
        blobIdHex = Hex.encode(header.blobId)
        let stride = segmentSize + AESGCMKey.tagSize
        var segmentsPerWrite = Swift.max(1, (256 << 10) / stride)
        if let sizeHint {
            let expected = Swift.max(1, (sizeHint + UInt64(segmentSize) - 1) / UInt64(segmentSize))
            segmentsPerWrite = Swift.min(segmentsPerWrite, Int(Swift.min(expected, UInt64(segmentsPerWrite))))
        }
        plaintext = .allocate(byteCount: segmentSize, alignment: 64)
        output = .allocate(byteCount: SealedBlobHeader.size + segmentsPerWrite * stride, alignment: 64)
        segmentIndex = startIndex
        self.total = total
        self.hasher = hasher
        if emitHeader {
            let headerBytes = header.encoded
            output.copyBytes(from: headerBytes)
            pending = headerBytes.count
        }
    }

    /// Continues a partial blob left by an interrupted write (a download): authenticates its
    /// complete segments (each must open as a non-final segment), re-hashes their plaintext, and
    /// returns a writer that appends after the last good one. The caller truncates the file to
    /// `keptBytes` and appends the writer's output there; `resumeAt` plaintext bytes are kept.
    public static func resume(partial fd: Int32, fileSize: UInt64, wrapKey: SecureBytes, expectedVaultId: [UInt8],
                              expectedBlobId: [UInt8], computeChecksum: Bool = true,
                              sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws
        -> (writer: SealedBlobWriter, resumeAt: UInt64, keptBytes: UInt64) {
        guard fileSize >= UInt64(SealedBlobHeader.size) else { throw CryptoError.invalidFormat("partial blob has no header") }
        var headerBytes = [UInt8](repeating: 0, count: SealedBlobHeader.size)
        guard headerBytes.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, $0.count, 0) }) == SealedBlobHeader.size else {
            throw CryptoError.invalidFormat("cannot read the partial blob's header")
        }
        let header = try SealedBlobHeader(bytes: headerBytes)
        guard header.vaultId == expectedVaultId, header.blobId == expectedBlobId else {
            throw CryptoError.authenticationFailed("the partial blob belongs to another vault or blob")
        }
        let dataKey = try header.unwrapDataKey(wrapKey: wrapKey)
        let crypto = try SegmentCrypto(dataKey: dataKey, header: header)
        defer { crypto.deallocate() }
        let stride = header.segmentSize + AESGCMKey.tagSize
        let complete = (fileSize - UInt64(SealedBlobHeader.size)) / UInt64(stride)
        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: stride, alignment: 64)
        let plain = UnsafeMutableRawBufferPointer.allocate(byteCount: header.segmentSize, alignment: 64)
        defer { plain.initializeMemory(as: UInt8.self, repeating: 0); plain.deallocate(); sealed.deallocate() }
        var hasher = SHA256Hasher()
        var good: UInt64 = 0
        while good < complete {
            let at = off_t(UInt64(SealedBlobHeader.size) + good * UInt64(stride))
            guard pread(fd, sealed.baseAddress, stride, at) == stride,
                  (try? crypto.open(index: good, last: false, ciphertextAndTag: UnsafeRawBufferPointer(sealed), into: plain)) != nil
            else { break }
            if computeChecksum { hasher.update(UnsafeRawBufferPointer(plain)) }
            good += 1
        }
        let writer = try SealedBlobWriter(header: header, dataKey: dataKey, computeChecksum: computeChecksum, emitHeader: false,
                                          startIndex: good, total: good * UInt64(header.segmentSize), hasher: hasher, sink: sink)
        return (writer, good * UInt64(header.segmentSize), UInt64(SealedBlobHeader.size) + good * UInt64(stride))
    }

    deinit {
        wipePlaintext()
        plaintext.deallocate()
        output.deallocate()
        segments.deallocate()
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkOpen()
        guard bytes.count > 0, let source = bytes.baseAddress else { return }
        if computeChecksum { hasher.update(bytes) }
        total += UInt64(bytes.count)
        var offset = 0
        do {
            while offset < bytes.count {
                let remaining = bytes.count - offset
                if buffered == segmentSize {
                    // More data follows, so the buffered segment is not the final one.
                    try sealSegment(UnsafeRawBufferPointer(plaintext), last: false)
                    buffered = 0
                }
                if buffered == 0 && remaining > segmentSize {
                    // A whole segment with more after it: seal straight from the caller's memory.
                    try sealSegment(UnsafeRawBufferPointer(start: source + offset, count: segmentSize), last: false)
                    offset += segmentSize
                    continue
                }
                let take = Swift.min(segmentSize - buffered, remaining)
                (plaintext.baseAddress! + buffered).copyMemory(from: source + offset, byteCount: take)
                buffered += take
                dirty = Swift.max(dirty, buffered)
                offset += take
            }
        } catch {
            state = .failed
            throw error
        }
    }

    /// Seals the final segment (1…S bytes, or 0 bytes for an empty blob), flushes everything to the
    /// sink and returns the total plaintext size. Calling `write` or `finish` again throws.
    public func finish() throws -> UInt64 {
        try checkOpen()
        do {
            try sealSegment(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(plaintext)[..<buffered]), last: true)
            try flush()
        } catch {
            state = .failed
            throw error
        }
        wipePlaintext()
        buffered = 0
        state = .finished
        if computeChecksum { plaintextSHA256 = hasher.finalize() }
        return total
    }

    /// Hands every completely sealed segment to the sink now (before giving up on a transfer,
    /// so a later `resume` keeps them). The segment still being filled stays buffered.
    public func flushCompleteSegments() throws {
        try checkOpen()
        try flush()
    }

    /// Zeroes what `plaintext` ever held (only that: the rest of its pages were never touched).
    private func wipePlaintext() {
        guard dirty > 0 else { return }
        plaintext.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: dirty)
        dirty = 0
    }

    private func checkOpen() throws {
        switch state {
        case .open: return
        case .finished: throw CryptoError.invalidParameter("SealedBlobWriter for blob \(blobIdHex) is already finished")
        case .failed: throw CryptoError.invalidParameter("SealedBlobWriter for blob \(blobIdHex) failed earlier; its output is incomplete")
        }
    }

    private func sealSegment(_ segment: UnsafeRawBufferPointer, last: Bool) throws {
        let stride = segmentSize + AESGCMKey.tagSize
        if output.count - pending < stride { try flush() }
        let destination = UnsafeMutableRawBufferPointer(rebasing: output[pending...])
        pending += try segments.seal(index: segmentIndex, last: last, plaintext: segment, into: destination)
        segmentIndex += 1
    }

    private func flush() throws {
        guard pending > 0 else { return }
        try sink(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(output)[..<pending]))
        pending = 0
    }
}
