internal import CSodium

/// The operating system's CSPRNG through libsodium's `randombytes_buf` (getrandom(2) on Linux).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "negative random byte count")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buf` with random bytes.
    public static func fill(_ buf: UnsafeMutableRawBufferPointer) {
        guard let start = buf.baseAddress, buf.count > 0 else { return }
        ensureSodium()
        randombytes_buf(start, buf.count)
    }
}
