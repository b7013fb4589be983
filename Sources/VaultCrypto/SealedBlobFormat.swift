import VaultPrimitives
/// The 112-byte header of a sealed blob (format version 1). All integers big-endian.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic ASCII `VAULTBLB` |
/// | 8 | 1 | format version = 1 |
/// | 9 | 1 | algorithm = 1 (AES-256-GCM) |
/// | 10 | 2 | reserved, must be 0 |
/// | 12 | 4 | segmentSize S (4096 ≤ S ≤ 16 MiB) |
/// | 16 | 16 | vaultId |
/// | 32 | 16 | blobId |
/// | 48 | 4 | keyEpoch |
/// | 52 | 12 | wrapNonce |
/// | 64 | 48 | AES-256-GCM(wrapKey, wrapNonce, dataKey, AAD = header[0..<52]) |
///
/// Segment i is AES-256-GCM(dataKey, 0x00000000 || u64 i, Pᵢ, header[0..<48] || u64 i || u8 last).
/// The segment AAD stops before keyEpoch (offset 48) so that rewrapping the data key under a new
/// epoch only rewrites the header; the wrap AAD does cover the epoch.
public struct SealedBlobHeader: Equatable, Sendable {
    public static let size = 112
    public static let defaultSegmentSize = 65536

    static let magic: [UInt8] = Array("VAULTBLB".utf8)
    static let formatVersion: UInt8 = 1
    static let algorithmAES256GCM: UInt8 = 1
    static let segmentSizeRange = 4096...(16 << 20)
    static let idSize = 16
    /// header[0..<52] authenticates the wrapped data key.
    static let wrapAADSize = 52
    /// header[0..<48] starts every segment's AAD.
    static let segmentAADPrefixSize = 48
    static let segmentAADSize = segmentAADPrefixSize + 8 + 1
    static let wrappedKeySize = AESGCMKey.keySize + AESGCMKey.tagSize

    public var segmentSize: Int
    public var vaultId: [UInt8]
    public var blobId: [UInt8]
    public var keyEpoch: UInt32
    var wrapNonce: [UInt8]
    var wrappedDataKey: [UInt8]

    /// Parses and validates the first 112 bytes of `bytes` (magic, version, algorithm, reserved,
    /// segment size). Does not unwrap the data key; nothing here is authenticated yet.
    public init(bytes: some Collection<UInt8>) throws {
        guard bytes.count >= Self.size else {
            throw CryptoError.invalidFormat("sealed blob header needs \(Self.size) bytes, got \(bytes.count)")
        }
        let header = Array(bytes.prefix(Self.size))
        guard Array(header[0..<8]) == Self.magic else {
            throw CryptoError.invalidFormat("not a sealed blob (bad magic)")
        }
        guard header[8] == Self.formatVersion else {
            throw CryptoError.invalidFormat("unsupported sealed blob format version \(header[8])")
        }
        guard header[9] == Self.algorithmAES256GCM else {
            throw CryptoError.invalidFormat("unsupported sealed blob algorithm \(header[9])")
        }
        guard header[10] == 0, header[11] == 0 else {
            throw CryptoError.invalidFormat("reserved header bytes are not zero")
        }
        let segmentSize = Int(readUInt32(header, at: 12))
        guard Self.segmentSizeRange.contains(segmentSize) else {
            throw CryptoError.invalidFormat("segment size \(segmentSize) outside \(Self.segmentSizeRange)")
        }
        self.segmentSize = segmentSize
        vaultId = Array(header[16..<32])
        blobId = Array(header[32..<48])
        keyEpoch = readUInt32(header, at: 48)
        wrapNonce = Array(header[52..<64])
        wrappedDataKey = Array(header[64..<112])
    }

    /// A new header whose data key is wrapped under `wrapKey` with a fresh random wrap nonce.
    init(segmentSize: Int, vaultId: [UInt8], blobId: [UInt8], keyEpoch: UInt32, dataKey: SecureBytes, wrapKey: SecureBytes) throws {
        guard Self.segmentSizeRange.contains(segmentSize) else {
            throw CryptoError.invalidParameter("segment size \(segmentSize) outside \(Self.segmentSizeRange)")
        }
        guard vaultId.count == Self.idSize, blobId.count == Self.idSize else {
            throw CryptoError.invalidParameter("vaultId and blobId must be \(Self.idSize) bytes")
        }
        self.segmentSize = segmentSize
        self.vaultId = vaultId
        self.blobId = blobId
        self.keyEpoch = keyEpoch
        wrapNonce = SecureRandom.bytes(AESGCMKey.nonceSize)
        wrappedDataKey = []
        try wrap(dataKey: dataKey, wrapKey: wrapKey)
    }

    /// The 112 header bytes.
    var encoded: [UInt8] {
        var out = authenticatedPrefix
        out += wrapNonce
        out += wrappedDataKey
        return out
    }

    /// header[0..<52]: everything before the wrap nonce.
    private var authenticatedPrefix: [UInt8] {
        var out = Self.magic
        out.reserveCapacity(Self.size)
        out += [Self.formatVersion, Self.algorithmAES256GCM, 0, 0]
        appendUInt32(&out, UInt32(segmentSize))
        out += vaultId
        out += blobId
        appendUInt32(&out, keyEpoch)
        return out
    }

    /// header[0..<48], the prefix of every segment's AAD.
    var segmentAADPrefix: [UInt8] { Array(authenticatedPrefix[0..<Self.segmentAADPrefixSize]) }

    /// The blob's data key, or `authenticationFailed` for a wrong wrap key or a modified header.
    public func unwrapDataKey(wrapKey: SecureBytes) throws -> SecureBytes {
        try unwrapDataKey(with: try AESGCMKey(wrapKey))
    }

    /// As `unwrapDataKey(wrapKey:)`, with a prepared key (no key schedule per call: for bulk work).
    public func unwrapDataKey(with key: AESGCMKey) throws -> SecureBytes {
        guard wrapNonce.count == AESGCMKey.nonceSize, wrappedDataKey.count == Self.wrappedKeySize else {
            throw CryptoError.invalidFormat("header wrap fields have the wrong size")
        }
        do {
            return try key.open(nonce: wrapNonce, ciphertextAndTag: wrappedDataKey, aad: authenticatedPrefix)
        } catch CryptoError.authenticationFailed {
            throw CryptoError.authenticationFailed("cannot unwrap the data key of blob \(Hex.encode(blobId)) at key epoch \(keyEpoch): wrong wrap key or modified header")
        }
    }

    /// Returns new 112 header bytes with the data key rewrapped under `newWrapKey` at `newEpoch`
    /// (for key rotation). The segments are untouched and stay valid: their AAD excludes the epoch.
    public static func rewrap(headerBytes: [UInt8], oldWrapKey: SecureBytes, newWrapKey: SecureBytes, newEpoch: UInt32) throws -> [UInt8] {
        guard headerBytes.count == size else {
            throw CryptoError.invalidParameter("rewrap needs exactly \(size) header bytes, got \(headerBytes.count)")
        }
        return try rewrap(headerBytes: headerBytes, oldKey: try AESGCMKey(oldWrapKey), newKey: try AESGCMKey(newWrapKey), newEpoch: newEpoch)
    }

    /// As `rewrap(headerBytes:oldKey:newKey:newEpoch:)`, unwrapping the data key into `scratch`
    /// (32 bytes of locked memory the caller reuses, so rotating 100,000 blobs allocates no key
    /// memory per blob). `scratch` holds the last data key afterwards; the caller wipes or drops it.
    public static func rewrap(headerBytes: [UInt8], oldKey: AESGCMKey, newKey: AESGCMKey, newEpoch: UInt32,
                              scratch: SecureBytes) throws -> [UInt8] {
        guard headerBytes.count == size, scratch.count == AESGCMKey.keySize else {
            throw CryptoError.invalidParameter("rewrap needs \(size) header bytes and a \(AESGCMKey.keySize)-byte scratch key")
        }
        var header = try SealedBlobHeader(bytes: headerBytes)
        let oldAAD = header.authenticatedPrefix
        try scratch.withUnsafeMutableBytes { dk in
            _ = try header.wrappedDataKey.withUnsafeBytes { ct in
                try oldAAD.withUnsafeBytes { ad in
                    try oldKey.open(nonce: UnsafeRawBufferPointer(start: header.wrapNonce, count: header.wrapNonce.count),
                                    ciphertextAndTag: ct, aad: ad, into: dk)
                }
            }
        }
        header.keyEpoch = newEpoch
        header.wrapNonce = SecureRandom.bytes(AESGCMKey.nonceSize)
        let newAAD = header.authenticatedPrefix
        var sealed = [UInt8](repeating: 0, count: wrappedKeySize)
        try scratch.withUnsafeBytes { dk in
            _ = try newAAD.withUnsafeBytes { ad in
                try sealed.withUnsafeMutableBytes { out in
                    try newKey.seal(nonce: header.wrapNonce, plaintext: dk, aad: ad, into: out)
                }
            }
        }
        header.wrappedDataKey = sealed
        return header.encoded
    }

    /// As `rewrap(headerBytes:oldWrapKey:newWrapKey:newEpoch:)` with prepared keys, for rotating many blobs.
    public static func rewrap(headerBytes: [UInt8], oldKey: AESGCMKey, newKey: AESGCMKey, newEpoch: UInt32) throws -> [UInt8] {
        guard headerBytes.count == size else {
            throw CryptoError.invalidParameter("rewrap needs exactly \(size) header bytes, got \(headerBytes.count)")
        }
        var header = try SealedBlobHeader(bytes: headerBytes)
        let dataKey = try header.unwrapDataKey(with: oldKey)
        header.keyEpoch = newEpoch
        header.wrapNonce = SecureRandom.bytes(AESGCMKey.nonceSize)
        try header.wrap(dataKey: dataKey, key: newKey)
        return header.encoded
    }

    private mutating func wrap(dataKey: SecureBytes, wrapKey: SecureBytes) throws {
        try wrap(dataKey: dataKey, key: try AESGCMKey(wrapKey))
    }

    private mutating func wrap(dataKey: SecureBytes, key: AESGCMKey) throws {
        guard dataKey.count == AESGCMKey.keySize else {
            throw CryptoError.invalidParameter("data key must be \(AESGCMKey.keySize) bytes")
        }
        let aad = authenticatedPrefix
        wrappedDataKey = try dataKey.withUnsafeBytes { plaintext in
            var sealed = [UInt8](repeating: 0, count: Self.wrappedKeySize)
            _ = try aad.withUnsafeBytes { ad in
                try sealed.withUnsafeMutableBytes { out in
                    try key.seal(nonce: wrapNonce, plaintext: plaintext, aad: ad, into: out)
                }
            }
            return sealed
        }
    }
}

/// Segment geometry and nonce/AAD construction shared by the writer and the reader.
struct SegmentCrypto {
    let key: AESGCMKey
    /// 12-byte nonce buffer: 4 zero bytes || u64 BE index.
    private let nonce: UnsafeMutableRawBufferPointer
    /// header[0..<48] || u64 BE index || u8 last.
    private let aad: UnsafeMutableRawBufferPointer

    init(dataKey: SecureBytes, header: SealedBlobHeader) throws {
        key = try AESGCMKey(dataKey)
        nonce = .allocate(byteCount: AESGCMKey.nonceSize, alignment: 8)
        nonce.initializeMemory(as: UInt8.self, repeating: 0)
        aad = .allocate(byteCount: SealedBlobHeader.segmentAADSize, alignment: 8)
        aad.initializeMemory(as: UInt8.self, repeating: 0)
        let prefix = header.segmentAADPrefix
        aad.copyBytes(from: prefix)
    }

    /// Frees the nonce and AAD buffers; call once from the owner's deinit.
    func deallocate() {
        nonce.deallocate()
        aad.deallocate()
    }

    private func prepare(index: UInt64, last: Bool) {
        storeUInt64(index, into: nonce, at: 4)
        storeUInt64(index, into: aad, at: SealedBlobHeader.segmentAADPrefixSize)
        aad[SealedBlobHeader.segmentAADSize - 1] = last ? 1 : 0
    }

    func seal(index: UInt64, last: Bool, plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        prepare(index: index, last: last)
        return try key.seal(nonce: UnsafeRawBufferPointer(nonce), plaintext: plaintext, aad: UnsafeRawBufferPointer(aad), into: output)
    }

    func open(index: UInt64, last: Bool, ciphertextAndTag: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        prepare(index: index, last: last)
        return try key.open(nonce: UnsafeRawBufferPointer(nonce), ciphertextAndTag: ciphertextAndTag, aad: UnsafeRawBufferPointer(aad), into: output)
    }
}

private func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
}

private func appendUInt32(_ bytes: inout [UInt8], _ value: UInt32) {
    bytes += [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
              UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
}

private func storeUInt64(_ value: UInt64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
    for byte in 0..<8 {
        buffer[offset + byte] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(byte)))
    }
}
