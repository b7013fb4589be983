/// Authenticates a sealed blob as its bytes arrive (a download of end-to-end encrypted content),
/// in constant memory: the header is checked against the expected vault and blob ids and its data
/// key unwrapped, then each segment is opened as soon as it is complete — with its index and, for
/// the segment the expected length makes final, `last = 1` — and its plaintext is hashed and
/// wiped. Nothing of the plaintext leaves this type; `finish()` says how long it was and its
/// SHA-256, so the caller can compare both with what the content record promised.
///
/// The expected sealed length comes from an authenticated record, so the geometry (segment count,
/// final segment size) is fixed before the first byte: a server that truncates, extends, reorders
/// or splices segments fails at the first segment that does not open, or at `finish()`.
public final class SealedStreamVerifier {
    public let expectedLength: UInt64
    private let expectedVaultId: [UInt8]
    private let expectedBlobId: [UInt8]
    private let wrapKey: (UInt32) throws -> SecureBytes
    private var headerBytes: [UInt8] = []
    private var segments: SegmentCrypto?
    private var stride = 0
    private var segmentCount: UInt64 = 0
    private var finalSize = 0
    /// The segment being filled.
    private var pending: UnsafeMutableRawBufferPointer?
    private var pendingCount = 0
    private var plaintext: UnsafeMutableRawBufferPointer?
    private var index: UInt64 = 0
    private var hasher = SHA256Hasher()
    private var plaintextBytes: UInt64 = 0
    /// Bytes accepted so far (header and segments).
    public private(set) var consumed: UInt64 = 0
    /// The key epoch the header names, once the header has arrived.
    public private(set) var keyEpoch: UInt32?
    /// Bytes of the blob authenticated so far: the header and every segment that opened.
    public private(set) var verified: UInt64 = 0

    /// Receives each segment's plaintext once it authenticated, instead of the internal hash
    /// (the caller hashes it elsewhere, e.g. on another core); the buffer is wiped afterwards.
    private let plaintextSink: ((UnsafeRawBufferPointer) -> Void)?

    /// `wrapKey` gives the blob wrap key of a key epoch (the header names the epoch it was sealed
    /// under). With `plaintextSink`, `finish()` returns an empty digest: the sink sees every
    /// plaintext byte, in order, and the caller computes the SHA-256.
    public init(expectedLength: UInt64, expectedVaultId: [UInt8], expectedBlobId: [UInt8],
                wrapKey: @escaping (UInt32) throws -> SecureBytes,
                plaintextSink: ((UnsafeRawBufferPointer) -> Void)? = nil) throws {
        self.plaintextSink = plaintextSink
        guard expectedLength >= UInt64(SealedBlobHeader.size + AESGCMKey.tagSize) else {
            throw CryptoError.invalidFormat("a sealed blob of \(expectedLength) bytes is shorter than a header and one tag")
        }
        self.expectedLength = expectedLength
        self.expectedVaultId = expectedVaultId; self.expectedBlobId = expectedBlobId; self.wrapKey = wrapKey
    }

    deinit {
        segments?.deallocate()
        pending?.deallocate()
        if let p = plaintext { p.initializeMemory(as: UInt8.self, repeating: 0); p.deallocate() }
    }

    /// Feeds the next bytes of the blob. Throws at the first byte past the expected length, a header
    /// that is not this blob's, or a segment that does not authenticate.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard consumed + UInt64(bytes.count) <= expectedLength else {
            throw CryptoError.invalidFormat("the sealed blob is longer than its record says (\(expectedLength) bytes)")
        }
        var rest = bytes
        if segments == nil {
            let take = min(SealedBlobHeader.size - headerBytes.count, rest.count)
            headerBytes += rest[rest.startIndex..<rest.startIndex + take]
            consumed += UInt64(take)
            rest = UnsafeRawBufferPointer(rebasing: rest[(rest.startIndex + take)...])
            guard headerBytes.count == SealedBlobHeader.size else { return }
            try startSegments()
        }
        while !rest.isEmpty {
            // A whole segment in the input: opened where it is, without a copy.
            if pendingCount == 0 && rest.count >= currentSegmentSize {
                let n = currentSegmentSize
                try openSegment(UnsafeRawBufferPointer(rebasing: rest[rest.startIndex..<(rest.startIndex + n)]))
                consumed += UInt64(n)
                rest = UnsafeRawBufferPointer(rebasing: rest[(rest.startIndex + n)...])
                continue
            }
            let want = currentSegmentSize - pendingCount
            let take = min(want, rest.count)
            (pending!.baseAddress! + pendingCount).copyMemory(from: rest.baseAddress!, byteCount: take)
            pendingCount += take
            consumed += UInt64(take)
            rest = UnsafeRawBufferPointer(rebasing: rest[(rest.startIndex + take)...])
            if pendingCount == currentSegmentSize { try openPending() }
        }
    }

    /// Convenience for arrays.
    public func feed(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try feed($0) } }

    /// Ends the stream: every segment must have arrived and opened (the final one with `last = 1`).
    /// Returns the plaintext length and its SHA-256.
    public func finish() throws -> (plaintextSize: UInt64, sha256: [UInt8]) {
        guard consumed == expectedLength, segments != nil, index == segmentCount else {
            throw CryptoError.invalidFormat("the sealed blob ended after \(consumed) of \(expectedLength) bytes")
        }
        return (plaintextBytes, plaintextSink == nil ? hasher.finalize() : [])
    }

    private var currentSegmentSize: Int { index == segmentCount - 1 ? finalSize : stride }

    private func startSegments() throws {
        let header = try SealedBlobHeader(bytes: headerBytes)
        guard header.vaultId == expectedVaultId, header.blobId == expectedBlobId else {
            throw CryptoError.authenticationFailed("the sealed blob belongs to another vault or blob")
        }
        let dataKey = try header.unwrapDataKey(wrapKey: try wrapKey(header.keyEpoch))
        keyEpoch = header.keyEpoch
        stride = header.segmentSize + AESGCMKey.tagSize
        let body = expectedLength - UInt64(SealedBlobHeader.size)
        segmentCount = (body + UInt64(stride) - 1) / UInt64(stride)
        finalSize = Int(body - (segmentCount - 1) * UInt64(stride))
        guard finalSize >= AESGCMKey.tagSize, finalSize > AESGCMKey.tagSize || segmentCount == 1 else {
            throw CryptoError.invalidFormat("a sealed blob of \(expectedLength) bytes has an impossible final segment")
        }
        segments = try SegmentCrypto(dataKey: dataKey, header: header)
        verified = UInt64(SealedBlobHeader.size)
        pending = .allocate(byteCount: stride, alignment: 64)
        plaintext = .allocate(byteCount: header.segmentSize, alignment: 64)
    }

    private func openPending() throws {
        try openSegment(UnsafeRawBufferPointer(rebasing: pending![..<pendingCount]))
        pendingCount = 0
    }

    /// Opens the next segment (`index`; the final one with `last = 1`) and hands its plaintext on.
    private func openSegment(_ sealed: UnsafeRawBufferPointer) throws {
        let last = index == segmentCount - 1
        let opened: Int
        do {
            opened = try segments!.open(index: index, last: last, ciphertextAndTag: sealed, into: plaintext!)
        } catch CryptoError.authenticationFailed {
            throw CryptoError.authenticationFailed("segment \(index) of the sealed blob")
        }
        if let plaintextSink { plaintextSink(UnsafeRawBufferPointer(rebasing: plaintext![..<opened])) }
        else { hasher.update(UnsafeRawBufferPointer(rebasing: plaintext![..<opened])) }
        plaintext!.initializeMemory(as: UInt8.self, repeating: 0)
        plaintextBytes += UInt64(opened)
        verified += UInt64(sealed.count)
        index += 1
    }
}
