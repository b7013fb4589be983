#if canImport(Glibc)
internal import Glibc
import VaultPrimitives
#endif

/// Random-access reads of a sealed blob through `pread` on an open file descriptor (the caller
/// owns and closes the descriptor). Only authenticated plaintext is ever returned.
///
/// Not thread-safe: it reuses one ciphertext buffer (about 256 KiB) and one plaintext segment
/// buffer, and remembers the last segment it decrypted so that sequential small reads inside one
/// segment decrypt it once. Use one reader per thread.
public final class SealedBlobReader {
    public let header: SealedBlobHeader
    /// Plaintext bytes in the blob.
    public let plaintextSize: UInt64
    /// Number of segments (at least 1; an empty blob is one empty final segment).
    public let segmentCount: Int

    /// Where the sealed bytes are: a file read with pread, or memory the caller keeps alive.
    private enum Source {
        case file(Int32)
        case memory(UnsafeRawBufferPointer)
    }
    private let source: Source
    private let segments: SegmentCrypto
    private let segmentSize: Int
    private let stride: Int
    private let finalCiphertextSize: Int
    private let blobIdHex: String
    private let segmentsPerRead: Int
    private let ciphertext: UnsafeMutableRawBufferPointer
    private let plaintext: UnsafeMutableRawBufferPointer
    /// The segment whose authenticated plaintext is in `plaintext` (-1: none).
    private var cachedSegment = -1
    private var cachedLength = 0

    /// Reads and checks the header, the blob's identity and its size geometry, and unwraps the data
    /// key. A blob carrying another vault or blob id (a swapped or copied file) throws
    /// `authenticationFailed`; a wrong wrap key or modified header throws `authenticationFailed`;
    /// an impossible size throws `invalidFormat`.
    public convenience init(fileDescriptor: Int32, fileSize: UInt64, wrapKey: SecureBytes, expectedVaultId: [UInt8], expectedBlobId: [UInt8]) throws {
        try self.init(source: .file(fileDescriptor), fileSize: fileSize, wrapKey: { _ in wrapKey },
                      expectedVaultId: expectedVaultId, expectedBlobId: expectedBlobId)
    }

    /// As `init(fileDescriptor:fileSize:wrapKey:…)`, with the wrap key of the key epoch the
    /// header names (a blob sealed before a rotation, reached through the key history).
    public convenience init(fileDescriptor: Int32, fileSize: UInt64, wrapKeyForEpoch: (UInt32) throws -> SecureBytes,
                            expectedVaultId: [UInt8], expectedBlobId: [UInt8]) throws {
        try self.init(source: .file(fileDescriptor), fileSize: fileSize, wrapKey: wrapKeyForEpoch,
                      expectedVaultId: expectedVaultId, expectedBlobId: expectedBlobId)
    }

    /// Reads a sealed blob held in memory (`sealed` must stay valid for the reader's life):
    /// segments are authenticated and decrypted straight from it, with no copy.
    public convenience init(memory sealed: UnsafeRawBufferPointer, wrapKey: SecureBytes, expectedVaultId: [UInt8], expectedBlobId: [UInt8]) throws {
        try self.init(source: .memory(sealed), fileSize: UInt64(sealed.count), wrapKey: { _ in wrapKey },
                      expectedVaultId: expectedVaultId, expectedBlobId: expectedBlobId)
    }

    private init(source: Source, fileSize: UInt64, wrapKey: (UInt32) throws -> SecureBytes, expectedVaultId: [UInt8], expectedBlobId: [UInt8]) throws {
        guard expectedVaultId.count == SealedBlobHeader.idSize, expectedBlobId.count == SealedBlobHeader.idSize else {
            throw CryptoError.invalidParameter("expected vault and blob ids must be \(SealedBlobHeader.idSize) bytes")
        }
        let expectedHex = Hex.encode(expectedBlobId)
        var headerBytes = [UInt8](repeating: 0, count: SealedBlobHeader.size)
        guard fileSize >= UInt64(SealedBlobHeader.size + AESGCMKey.tagSize) else {
            throw CryptoError.invalidFormat("blob \(expectedHex) is \(fileSize) bytes, shorter than a header and one tag")
        }
        try headerBytes.withUnsafeMutableBytes { buffer in
            switch source {
            case .file(let fd): try preadFully(fd, into: buffer, at: 0, blobHex: expectedHex)
            case .memory(let m): buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: m[..<SealedBlobHeader.size]))
            }
        }
        let header = try SealedBlobHeader(bytes: headerBytes)
        guard header.vaultId == expectedVaultId, header.blobId == expectedBlobId else {
            throw CryptoError.authenticationFailed(
                "blob \(expectedHex) of vault \(Hex.encode(expectedVaultId)) belongs to vault \(Hex.encode(header.vaultId)), blob \(Hex.encode(header.blobId))")
        }
        let geometry = try SealedGeometry(sealedSize: fileSize, segmentSize: header.segmentSize, blobHex: expectedHex)
        let stride = geometry.stride, count = UInt64(geometry.count), finalSize = UInt64(geometry.finalSize)
        let tagSize = UInt64(AESGCMKey.tagSize), body = fileSize - UInt64(SealedBlobHeader.size)

        let dataKey = try header.unwrapDataKey(wrapKey: try wrapKey(header.keyEpoch))
        segments = try SegmentCrypto(dataKey: dataKey, header: header)
        self.header = header
        self.source = source
        segmentSize = header.segmentSize
        self.stride = Int(stride)
        segmentCount = Int(count)
        finalCiphertextSize = Int(finalSize)
        plaintextSize = body - tagSize * count
        blobIdHex = expectedHex
        segmentsPerRead = Swift.max(1, (256 << 10) / Int(stride))
        ciphertext = .allocate(byteCount: segmentsPerRead * Int(stride), alignment: 64)
        plaintext = .allocate(byteCount: segmentSize, alignment: 64)
    }

    deinit {
        plaintext.initializeMemory(as: UInt8.self, repeating: 0)
        plaintext.deallocate()
        ciphertext.deallocate()
        segments.deallocate()
    }

    /// Plaintext bytes `[offset, offset + count)`, clamped to the end of the blob (an offset at or
    /// past the end gives `[]`). Throws `authenticationFailed` naming the first bad segment.
    ///
    /// A read of at least one byte that reaches the end of the blob (including one at or past the
    /// end) always opens the final segment, even an empty one: its tag authenticates the `last`
    /// flag, so a truncated or extended blob fails here instead of reading as a shorter file.
    public func read(offset: UInt64, count: Int) throws -> [UInt8] {
        guard count >= 0 else { throw CryptoError.invalidParameter("negative read count \(count)") }
        guard count > 0 else { return [] }
        let start = Swift.min(offset, plaintextSize)
        let end = start + Swift.min(UInt64(count), plaintextSize - start)
        let resultCount = Int(end - start)
        return try [UInt8](unsafeUninitializedCapacity: resultCount) { result, initialized in
            initialized = try read(from: start, to: end, into: UnsafeMutableRawBufferPointer(result))
        }
    }

    /// As `read(offset:count:)`, into `buffer` (at most `buffer.count` bytes): returns how many
    /// bytes it holds. When a segment fails, what earlier segments put in `buffer` is zeroed
    /// before the error is thrown, so a failed read leaves no plaintext behind.
    public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        let start = Swift.min(offset, plaintextSize)
        return try read(from: start, to: start + Swift.min(UInt64(buffer.count), plaintextSize - start), into: buffer)
    }

    private func read(from start: UInt64, to end: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        do {
            try forEachSlice(from: start, to: end) { slice in
                (buffer.baseAddress! + filled).copyMemory(from: slice.baseAddress!, byteCount: slice.count)
                filled += slice.count
            }
        } catch {
            if filled > 0 { buffer.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: filled) }
            throw error
        }
        return filled
    }

    /// Streams `[offset, offset + length)` (nil: to the end), clamped to the end, in pieces of at
    /// most one segment, in constant memory. Stops at the first segment that fails to authenticate,
    /// having passed on nothing of it (earlier segments' plaintext may already have been delivered).
    /// `body` must not keep the buffer.
    ///
    /// A whole-blob stream (`stream { … }`) opens every segment, the final one included even when
    /// it is empty; any stream that reaches the end opens the final segment (see `read`). Only when
    /// it returns without throwing is the delivered plaintext the blob's whole (requested) content.
    public func stream(from offset: UInt64 = 0, length: UInt64? = nil, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard length != 0 else { return }
        let start = Swift.min(offset, plaintextSize)
        let end = start + Swift.min(length ?? UInt64.max, plaintextSize - start)
        try forEachSlice(from: start, to: end, body)
    }

    /// Opens every segment (the final one included) and discards the plaintext: true when the
    /// whole blob authenticates, else the first failure is thrown.
    public func verifyAll() throws {
        try stream { _ in }
    }

    // MARK: Segments

    /// Calls `body` with the authenticated plaintext of `[start, end)` (in bounds), one piece per
    /// segment. When `end` is the end of the blob, the segments through the final one are opened
    /// (an empty range at the end opens just the final segment); otherwise an empty range opens none.
    private func forEachSlice(from start: UInt64, to end: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let size = UInt64(segmentSize)
        let finalIndex = segmentCount - 1
        let reachesEnd = end == plaintextSize
        guard end > start || reachesEnd else { return }
        let first = Swift.min(Int(start / size), finalIndex)
        let last = reachesEnd ? finalIndex : Int((end - 1) / size)
        try forEachSegment(first...last) { index, segment in
            let segmentStart = UInt64(index) * size
            let lower = Int(Swift.max(start, segmentStart) - segmentStart)
            let upper = Int(Swift.min(end, segmentStart + UInt64(segment.count)) - segmentStart)
            if upper > lower {
                try body(UnsafeRawBufferPointer(rebasing: segment[lower..<upper]))
            }
        }
    }

    /// Authenticates and decrypts the segments in `range` in order, reading up to `segmentsPerRead`
    /// segments per pread, and calls `body` with each segment's whole plaintext.
    private func forEachSegment(_ range: ClosedRange<Int>, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        var index = range.lowerBound
        while index <= range.upperBound {
            if index == cachedSegment {
                try body(index, UnsafeRawBufferPointer(rebasing: plaintext[..<cachedLength]))
                index += 1
                continue
            }
            let batchEnd = Swift.min(range.upperBound, index + segmentsPerRead - 1)
            let batchStart = ciphertextOffset(of: index)
            let batchBytes = Int(ciphertextOffset(of: batchEnd) - batchStart) + ciphertextSize(of: batchEnd)
            let sealedBatch: UnsafeRawBufferPointer
            switch source {
            case .file(let fd):
                try preadFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: ciphertext[..<batchBytes]),
                               at: batchStart, blobHex: blobIdHex)
                sealedBatch = UnsafeRawBufferPointer(ciphertext)
            case .memory(let m):
                sealedBatch = UnsafeRawBufferPointer(rebasing: m[Int(batchStart)..<Int(batchStart) + batchBytes])
            }
            var position = 0
            for segmentIndex in index...batchEnd {
                let size = ciphertextSize(of: segmentIndex)
                let sealed = UnsafeRawBufferPointer(rebasing: sealedBatch[position..<position + size])
                position += size
                cachedSegment = -1
                let opened: Int
                do {
                    opened = try segments.open(index: UInt64(segmentIndex), last: segmentIndex == segmentCount - 1,
                                               ciphertextAndTag: sealed, into: plaintext)
                } catch CryptoError.authenticationFailed {
                    throw CryptoError.authenticationFailed("segment \(segmentIndex) of blob \(blobIdHex)")
                }
                cachedSegment = segmentIndex
                cachedLength = opened
                try body(segmentIndex, UnsafeRawBufferPointer(rebasing: plaintext[..<opened]))
            }
            index = batchEnd + 1
        }
    }

    /// Asks the kernel to read ahead the sealed segments behind plaintext `offset..<offset+length`
    /// (clamped to the blob; advice only: nothing is read or trusted here), so a sequential
    /// reader's disk reads run while it decrypts. Nothing for a blob in memory.
    public func willNeed(offset: UInt64, length: UInt64) {
        guard case .file(let fd) = source, offset < plaintextSize, length > 0 else { return }
        let size = UInt64(segmentSize)
        let end = Swift.min(plaintextSize, offset + Swift.min(length, plaintextSize))
        let first = Int(offset / size), last = Swift.min(segmentCount - 1, Int((end - 1) / size))
        let sealedStart = ciphertextOffset(of: first)
        let sealedEnd = ciphertextOffset(of: last) + UInt64(ciphertextSize(of: last))
        _ = posix_fadvise(fd, Int(sealedStart), Int(sealedEnd - sealedStart), Int32(POSIX_FADV_WILLNEED))
    }

    private func ciphertextOffset(of index: Int) -> UInt64 {
        UInt64(SealedBlobHeader.size) + UInt64(index) * UInt64(stride)
    }

    private func ciphertextSize(of index: Int) -> Int {
        index == segmentCount - 1 ? finalCiphertextSize : stride
    }
}

/// pread until `buffer` is full; EOF first means the file shrank under us.
private func preadFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, blobHex: String) throws {
    let n: Int
    do { n = try POSIXIO.readFully(fd, into: buffer, at: Int64(offset)) } catch {
        throw CryptoError.internalFailure("pread of blob \(blobHex) failed: \(error)")
    }
    if n < buffer.count { throw CryptoError.invalidFormat("blob \(blobHex) is shorter than its stated size") }
}
