import VaultPrimitives

/// Authenticates single segments of a sealed blob fetched out of order (on-demand reads of a
/// remote file, SECURITY.md "Sparse partial downloads"): the header is checked against the
/// expected vault and blob ids and its data key unwrapped once; then any segment `i` can be
/// checked alone, with its index and — for the segment the expected sealed length makes final —
/// `last = 1` in its nonce and AAD. The plaintext is decrypted into a scratch buffer and wiped:
/// nothing of it leaves this type.
///
/// The expected sealed length comes from an authenticated content record, so the geometry (the
/// segment count, the final segment's size, every segment's byte range) is fixed before any
/// segment arrives; a segment moved, swapped, cut or extended does not open.
public final class SealedSegmentVerifier {
    /// The sealed length the geometry is computed from.
    public let sealedSize: UInt64
    /// Plaintext bytes per segment (from the header).
    public let segmentSize: Int
    /// Number of segments (at least 1).
    public let segmentCount: Int
    /// The key epoch the header names.
    public let keyEpoch: UInt32
    private let stride: UInt64
    private let finalCiphertextSize: Int
    private let segments: SegmentCrypto
    private let scratch: UnsafeMutableRawBufferPointer
    private let blobIdHex: String

    /// Checks `headerBytes` (the first 112 bytes of the blob) against the expected ids, unwraps the
    /// data key with the wrap key of the epoch it names, and fixes the geometry of a blob of
    /// `sealedSize` bytes. A header of another blob or vault, or one that does not unwrap, throws
    /// `authenticationFailed`; an impossible geometry throws `invalidFormat`.
    public init(headerBytes: [UInt8], sealedSize: UInt64, wrapKeyForEpoch: (UInt32) throws -> SecureBytes,
                expectedVaultId: [UInt8], expectedBlobId: [UInt8]) throws {
        blobIdHex = Hex.encode(expectedBlobId)
        let header = try SealedBlobHeader(bytes: headerBytes)
        guard header.vaultId == expectedVaultId, header.blobId == expectedBlobId else {
            throw CryptoError.authenticationFailed("the header fetched for blob \(blobIdHex) belongs to blob \(Hex.encode(header.blobId))")
        }
        let geometry = try SealedGeometry(sealedSize: sealedSize, segmentSize: header.segmentSize, blobHex: blobIdHex)
        let dataKey = try header.unwrapDataKey(wrapKey: try wrapKeyForEpoch(header.keyEpoch))
        segments = try SegmentCrypto(dataKey: dataKey, header: header)
        self.sealedSize = sealedSize
        segmentSize = header.segmentSize
        segmentCount = geometry.count
        stride = geometry.stride
        finalCiphertextSize = geometry.finalSize
        keyEpoch = header.keyEpoch
        scratch = .allocate(byteCount: header.segmentSize, alignment: 64)
    }

    deinit {
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        scratch.deallocate()
        segments.deallocate()
    }

    /// The byte range of segment `index` (tag included) in the sealed blob.
    public func ciphertextRange(of index: Int) -> Range<UInt64> {
        let start = UInt64(SealedBlobHeader.size) + UInt64(index) * stride
        return start..<start + UInt64(index == segmentCount - 1 ? finalCiphertextSize : Int(stride))
    }

    /// The segments holding plaintext bytes `[offset, offset + count)` (clamped to the blob); a
    /// range that reaches the end includes the final segment (the reader opens it there).
    public func segments(plaintextOffset offset: UInt64, count: Int) -> ClosedRange<Int> {
        let plaintextSize = sealedSize - UInt64(SealedBlobHeader.size) - UInt64(segmentCount) * UInt64(AESGCMKey.tagSize)
        let start = min(offset, plaintextSize)
        let end = start + min(UInt64(max(0, count)), plaintextSize - start)
        let first = min(Int(start / UInt64(segmentSize)), segmentCount - 1)
        let last = end == plaintextSize ? segmentCount - 1 : max(first, Int((end - 1) / UInt64(segmentSize)))
        return first...last
    }

    /// Authenticates segment `index` from its sealed bytes (exactly `ciphertextRange(of:)` long).
    /// Throws `authenticationFailed` naming the segment when it does not open.
    public func verify(index: Int, sealed: UnsafeRawBufferPointer) throws {
        guard index >= 0, index < segmentCount, UInt64(sealed.count) == UInt64(ciphertextRange(of: index).count) else {
            throw CryptoError.invalidFormat("segment \(index) of blob \(blobIdHex) has \(sealed.count) bytes, not its geometry's")
        }
        defer { scratch.initializeMemory(as: UInt8.self, repeating: 0) }
        do {
            _ = try segments.open(index: UInt64(index), last: index == segmentCount - 1, ciphertextAndTag: sealed, into: scratch)
        } catch CryptoError.authenticationFailed {
            throw CryptoError.authenticationFailed("segment \(index) of blob \(blobIdHex)")
        }
    }
}

/// The segment geometry a sealed length fixes: stride (segment plus tag), segment count, the
/// final segment's sealed size. The same rules as `SealedBlobReader`'s.
struct SealedGeometry {
    let stride: UInt64
    let count: Int
    let finalSize: Int

    init(sealedSize: UInt64, segmentSize: Int, blobHex: String) throws {
        let headerSize = UInt64(SealedBlobHeader.size), tagSize = UInt64(AESGCMKey.tagSize)
        guard sealedSize >= headerSize + tagSize else {
            throw CryptoError.invalidFormat("blob \(blobHex) is \(sealedSize) bytes, shorter than a header and one tag")
        }
        stride = UInt64(segmentSize) + tagSize
        let body = sealedSize - headerSize
        let count = (body + stride - 1) / stride
        let finalSize = body - (count - 1) * stride
        guard finalSize >= tagSize else { throw CryptoError.invalidFormat("blob \(blobHex) is truncated inside a segment tag") }
        guard finalSize > tagSize || count == 1 else {
            throw CryptoError.invalidFormat("blob \(blobHex) ends with an empty segment after other segments")
        }
        guard count <= UInt64(Int.max) else { throw CryptoError.invalidFormat("blob \(blobHex) is too large") }
        self.count = Int(count)
        self.finalSize = Int(finalSize)
    }
}
